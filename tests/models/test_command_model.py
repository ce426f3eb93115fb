"""model=command: a real separate program (examples/command_model/model.py), run per batch without a shell."""

from __future__ import annotations

import json
import shutil
import sys
import time

import numpy as np

from tests.benchmarks._folder_helpers import EXAMPLE, copy_example, lines, write_lines
from tests.conftest import ROOT, compose, only_run_dir, read_jsonl, run_cli
from wfeval.api import ArtifactRef
from wfeval.pipeline.runner import run_from_config
from wfeval.storage.artifacts import read_array

SCRIPT = ROOT / "examples" / "command_model" / "model.py"


def _argv(*extra: str, script=SCRIPT) -> str:
    items = ",".join([sys.executable, str(script), "'{requests}'", *extra])
    return f"model.argv=[{items}]"


def _run(tmp_path, store, *overrides, name="run", samples=3):
    size = [f"benchmark.num_samples={samples}"] if samples else []
    cfg = compose(["model=command", *size, f"run.store_dir={store}",
                   "run.progress=off", "metric=[generated_rate,psnr]", "model.retry_delay_s=0", *overrides])
    return run_from_config(cfg, output_dir=tmp_path / name)


def _generations(tmp_path, name="run") -> dict:
    return {r["request"]["sample_id"]: r["result"] for r in read_jsonl(tmp_path / name / "generations.jsonl")}


def test_from_the_command_line_with_the_example_script(tmp_path):
    proc = run_cli(["benchmark=folder", f"benchmark.dataset_root={EXAMPLE}", "model=command", _argv(),
                    "run.progress=off", f"run.store_dir={tmp_path / 'store'}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    run = only_run_dir(tmp_path / "outputs" / "runs")
    results = json.loads((run / "results.json").read_text())["results"]
    assert results["gridworld_tiny.generated_rate"]["normalized_stats"]["ratio"] == 1.0
    steps = read_jsonl(run / "steps.jsonl")
    assert "generating gridworld-test-00000" in steps[0]["log"] and steps[0]["attempts"] == 1
    fingerprint = json.loads((run / "manifest.json").read_text())["model"]["fingerprint"]
    assert len(fingerprint["argv_files"][str(SCRIPT)]) == 64


def test_outputs_follow_the_actions_and_the_per_sample_seed(tmp_path, store):
    _run(tmp_path, store, _argv("--noise", "3"), samples=2)
    rows = read_jsonl(tmp_path / "run" / "generations.jsonl")
    videos = [read_array(ArtifactRef.from_dict(r["result"]["artifacts"]["generated_video"])) for r in rows]
    assert videos[0].shape == (16, 64, 64, 3) and not np.array_equal(videos[0][1:], videos[0][:-1])
    seeds = [r["request"]["generation"]["seed"] for r in rows]
    assert seeds[0] != seeds[1]


def test_a_sample_the_program_reports_as_failed_and_the_rest(tmp_path, store):
    summary = _run(tmp_path, store, _argv("--fail-on", "gridworld-test-00001"))
    results = _generations(tmp_path)
    assert results["gridworld-test-00001"]["status"] == "failed"
    assert results["gridworld-test-00001"]["error"] == "SampleFailed: the program reported: simulated failure on this sample"
    assert [results[f"gridworld-test-0000{i}"]["status"] for i in (0, 2)] == ["ok", "ok"]
    assert summary.results["gridworld.generated_rate"].normalized_stats["ratio"] == 2 / 3


def test_a_crashing_program_is_retried_then_fails_with_its_stderr_in_the_trace(tmp_path, store):
    _run(tmp_path, store, _argv("--crash"), "model.retries=1", samples=2, name="crash")
    results = _generations(tmp_path, "crash")
    for result in results.values():
        assert result["status"] == "failed"
        assert "exited with status 1 (2 attempt(s))" in result["error"] and "simulated crash" in result["error"]
    steps = read_jsonl(tmp_path / "crash" / "steps.jsonl")
    assert all(s["attempts"] == 2 and "simulated crash" in s["log"] for s in steps)


def test_a_program_past_its_timeout_is_killed(tmp_path, store):
    started = time.monotonic()
    _run(tmp_path, store, _argv("--sleep", "60"), "model.timeout_s=0.5", samples=1, name="slow")
    assert time.monotonic() - started < 20
    [result] = _generations(tmp_path, "slow").values()
    assert result["status"] == "failed" and "timed out after 0.5 s" in result["error"]


def test_sample_data_never_reaches_the_command_line(tmp_path, store):
    root = copy_example(tmp_path / "data")
    rows = lines(root)[:1]
    rows[0]["sample_id"] = "x; touch PWNED $(touch PWNED2) {output_dir}"
    write_lines(root, rows)
    _run(tmp_path, store, _argv(), "benchmark=folder", f"benchmark.dataset_root={root}", samples=0)
    [result] = _generations(tmp_path).values()
    assert result["status"] == "ok"
    assert not list(tmp_path.rglob("PWNED*")) and not list(ROOT.glob("PWNED*"))


def test_editing_the_script_changes_the_model_identity(tmp_path, store):
    script = tmp_path / "model.py"
    shutil.copy(SCRIPT, script)
    first = _run(tmp_path, store, _argv(script=script), samples=2, name="a")
    again = _run(tmp_path, store, _argv(script=script), samples=2, name="b")
    script.write_text(script.read_text() + "\n# tuned\n")
    edited = _run(tmp_path, store, _argv(script=script), samples=2, name="c")
    assert (first.generated, again.cached, edited.generated) == (2, 2, 2)
