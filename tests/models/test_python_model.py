"""model=python: any object with generate(requests), batched, with setup/close and a declared device."""

from __future__ import annotations

import json

import pytest
import wfeval_test_models

from tests.conftest import compose, only_run_dir, read_jsonl, run_cli
from wfeval.config.errors import ConfigError
from wfeval.pipeline.runner import run_from_config

TARGET = "model.object._target_=wfeval_test_models.RecordingModel"


def _run(tmp_path, store, *overrides, name="run"):
    cfg = compose(["model=python", TARGET, "benchmark.num_samples=7", f"run.store_dir={store}", "run.progress=off",
                   "metric=[generated_rate]", *overrides])
    return run_from_config(cfg, output_dir=tmp_path / name)


def test_batches_setup_with_the_device_close_and_identity(tmp_path, store):
    wfeval_test_models.CALLS.clear()
    summary = _run(tmp_path, store, "model.batch_size=3")
    events = wfeval_test_models.CALLS
    assert events[0] == {"event": "setup", "device": "cpu"} and events[-1] == {"event": "close"}
    assert [len(e["ids"]) for e in events if e["event"] == "generate"] == [3, 3, 1]
    assert summary.results["gridworld.generated_rate"].normalized_stats["ratio"] == 1.0
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["model"]["name"] == "recording" and manifest["model"]["version"] == "1.0"
    assert manifest["model"]["fingerprint"]["class"] == "wfeval_test_models.RecordingModel"
    assert len(manifest["model"]["fingerprint"]["source_sha256"]) == 64
    assert {r["result"]["metadata"]["device"] for r in read_jsonl(tmp_path / "run" / "generations.jsonl")} == {"cpu"}

    again = _run(tmp_path, store, "model.batch_size=3", name="again")
    assert (again.generated, again.cached) == (0, 7)
    other = _run(tmp_path, store, "+model.object.noise=2.0", name="other")  # another config: another identity
    assert (other.generated, other.cached) == (7, 0)


def test_per_sample_outcomes_not_generated_failed_and_a_raising_batch(tmp_path, store):
    summary = _run(tmp_path, store, "model.batch_size=4", "+model.object.missing=[00001]",
                   "+model.object.broken=[00002]", "+model.object.raise_on=[00005]")
    rows = {r["request"]["sample_id"][-1]: r["result"] for r in read_jsonl(tmp_path / "run" / "generations.jsonl")}
    assert rows["1"]["status"] == "not_generated" and rows["1"]["error"] == "nothing for gridworld-test-00001"
    assert rows["2"]["status"] == "failed" and rows["2"]["error"] == "ValueError: cannot do gridworld-test-00002"
    assert rows["5"]["status"] == "failed" and "batch crash because of gridworld-test-00005" in rows["5"]["error"]
    assert {k for k, r in rows.items() if r["status"] == "ok"} == {"0", "3", "4", "6"}
    rate = summary.results["gridworld.generated_rate"]
    assert (rate.n_valid, rate.normalized_stats["ratio"]) == (7, 4 / 7)


def test_a_declared_accelerator_that_is_missing_stops_before_generation(tmp_path, store):
    pytest.importorskip("torch")
    import torch

    if torch.cuda.is_available():
        pytest.skip("a CUDA device is present")
    with pytest.raises(ConfigError, match="model.device='cuda' but no CUDA device is available"):
        _run(tmp_path, store, "model.device=cuda")
    assert not (tmp_path / "run" / "steps.jsonl").exists()


def test_an_object_without_generate_is_refused_naming_the_key(tmp_path, store, monkeypatch):
    monkeypatch.setenv("WFEVAL_TRUST", "builtins.dict")  # in-process: no command line, trusted explicitly
    with pytest.raises(ConfigError, match="model.object: dict has neither generate"):
        _run(tmp_path, store, "model.object._target_=builtins.dict")


def test_from_the_command_line(tmp_path):
    proc = run_cli(["model=python", TARGET, "benchmark.num_samples=3", "run.progress=off",
                    f"run.store_dir={tmp_path / 'store'}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "recording on gridworld" in proc.stdout
    run = only_run_dir(tmp_path / "outputs" / "runs")
    assert run.name.endswith("_gridworld_python")


def test_required_keys_of_the_adapters_are_named_when_missing(tmp_path, store):
    from wfeval.pipeline import build

    for option, message in (("python", "model.object._target_: required, not set"),
                            ("command", r"model.argv: required \(or model.step_argv, a program serving the step"),
                            ("precomputed", "model.root: required, not set")):
        with pytest.raises(ConfigError, match=message):
            build.build_model(compose([f"model={option}"]))
