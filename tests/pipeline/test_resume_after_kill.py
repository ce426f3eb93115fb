"""SIGKILL halfway, start again: identical results, finished samples not regenerated."""

from __future__ import annotations

import json
import signal
import subprocess
import sys
import time
from pathlib import Path

from tests.conftest import SUPPORT_CONF, cli_env, only_run_dir, read_jsonl, run_cli, run_python

N = 12


def _args(store: Path) -> list[str]:
    return [f"hydra.searchpath=[{SUPPORT_CONF}]", "model=slow_oracle", "model.delay_s=0.15",
            f"benchmark.num_samples={N}", "run.batch_size=1", f"run.store_dir={store}",
            "metric=[generated_rate,frame_count]"]


def _kill_after_generating(cwd: Path, store: Path, at_least: int) -> Path:
    proc = subprocess.Popen([sys.executable, "-m", "wfeval", *_args(store)], cwd=cwd, env=cli_env(),
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 120
    try:
        while time.monotonic() < deadline:
            runs = list((cwd / "outputs" / "runs").glob("*/steps.jsonl")) if (cwd / "outputs").exists() else []
            if runs and len(read_jsonl(runs[0])) >= at_least:
                break
            time.sleep(0.02)
        else:
            raise AssertionError("the run never got going")
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.wait()
    return only_run_dir(cwd / "outputs" / "runs")


def _generated_and_cached(run_dir: Path) -> tuple[int, int]:
    steps = read_jsonl(run_dir / "steps.jsonl")
    return sum(not s["cached"] for s in steps), sum(s["cached"] for s in steps)


def _prediction_hashes(run_dir: Path) -> list[str]:
    return [s["prediction"]["generated_video"]["sha256"] for s in read_jsonl(run_dir / "samples.jsonl")]


def _results(run_dir: Path) -> dict:
    return json.loads((run_dir / "results.json").read_text())["results"]


def test_rerun_after_sigkill_finishes_identically_without_regenerating(tmp_path):
    reference_cwd, killed_cwd = tmp_path / "ref", tmp_path / "killed"
    reference_cwd.mkdir(), killed_cwd.mkdir()
    assert run_cli(_args(tmp_path / "ref_store"), cwd=reference_cwd).returncode == 0
    reference = only_run_dir(reference_cwd / "outputs" / "runs")

    killed = _kill_after_generating(killed_cwd, tmp_path / "store", at_least=4)
    assert json.loads((killed / "manifest.json").read_text())["status"] == "running"
    assert not (killed / "results.json").exists()
    done_before_kill = len(list((tmp_path / "store" / "generations").rglob("*.json")))
    assert 4 <= done_before_kill < N

    proc = run_cli(_args(tmp_path / "store"), cwd=killed_cwd)
    assert proc.returncode == 0, proc.stderr
    rerun = max((killed_cwd / "outputs" / "runs").iterdir())
    generated, cached = _generated_and_cached(rerun)
    assert cached == done_before_kill and generated == N - done_before_kill
    assert _results(rerun) == _results(reference)
    assert _prediction_hashes(rerun) == _prediction_hashes(reference)


def test_explicit_resume_finishes_the_killed_run_in_its_own_directory(tmp_path):
    killed = _kill_after_generating(tmp_path, tmp_path / "store", at_least=3)
    done_before_kill = len(list((tmp_path / "store" / "generations").rglob("*.json")))
    proc = run_python(["-m", "wfeval.resume", str(killed)], cwd=tmp_path, env=cli_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert only_run_dir(tmp_path / "outputs" / "runs") == killed
    manifest = json.loads((killed / "manifest.json").read_text())
    assert manifest["status"] == "completed" and manifest["resumed"] is True
    assert "run_resumed" in [e["event"] for e in read_jsonl(killed / "events.jsonl")]
    steps = read_jsonl(killed / "steps.jsonl")
    assert sum(not s["cached"] for s in steps) == N  # each sample generated exactly once overall
    assert sum(s["cached"] for s in steps) == done_before_kill
    assert _results(killed)["gridworld.generated_rate"]["normalized_stats"]["ratio"] == 1.0
    assert len(read_jsonl(killed / "metrics.jsonl")) == 2 * N


def _crash_was_transient(monkeypatch, flaky) -> None:
    """The flaky model's next calls succeed, its object unchanged (a changed attribute would be another
    model: its live state is part of its identity, docs/adding-a-model.md)."""
    monkeypatch.setattr(flaky, "generate_one", flaky.__mro__[1].generate_one)


def test_resuming_rescores_a_sample_whose_generation_changed_and_reuses_the_others(tmp_path, monkeypatch):
    import wfeval_test_plugins

    from tests.conftest import compose
    from wfeval.pipeline.runner import run_from_config

    cfg = compose([f"hydra.searchpath=[{SUPPORT_CONF}]", f"run.store_dir={tmp_path / 'store'}", "run.progress=off",
                   "benchmark.num_samples=6", "run.batch_size=1", "metric=[generated_rate,frame_count]",
                   "model=flaky_oracle", "model.fail_on=[3]"], searchpath=True)
    run_dir = tmp_path / "run"
    first = run_from_config(cfg, run_dir)
    assert first.results["gridworld.frame_count"].n_valid == 5
    rows_before = read_jsonl(run_dir / "metrics.jsonl")
    # same config, same run directory, the same model (its state and code unchanged: the same identity);
    # the crash was transient and does not happen again (failures are never cached)
    _crash_was_transient(monkeypatch, wfeval_test_plugins.FlakyOracle)
    second = run_from_config(cfg, run_dir)
    assert second.results["gridworld.frame_count"].n_valid == 6
    assert second.results["gridworld.generated_rate"].normalized_stats["ratio"] == 1.0
    rows_after = read_jsonl(run_dir / "metrics.jsonl")
    # only sample 3 rescored (both metrics); its two stale rows are dropped, the others kept as they were
    kept = [r for r in rows_before if r["sample_id"] != "gridworld-test-00003"]
    assert rows_after[:len(kept)] == kept and len(rows_after) == len(rows_before)
    assert [(r["sample_id"], r["valid"]) for r in rows_after[len(kept):]] == [("gridworld-test-00003", True)] * 2


def test_a_resume_after_a_resume_killed_before_scoring_never_reuses_a_row_of_the_old_generation(tmp_path, monkeypatch):
    """Attempt 1 scores sample 3's failed generation; attempt 2 regenerates it (now ok) and dies as
    scoring starts; attempt 3 must score the new generation, not reuse attempt 1's skip row."""
    import pytest
    import wfeval_test_plugins

    from tests.conftest import compose
    from wfeval.pipeline import scoring
    from wfeval.pipeline.runner import run_from_config

    cfg = compose([f"hydra.searchpath=[{SUPPORT_CONF}]", f"run.store_dir={tmp_path / 'store'}", "run.progress=off",
                   "benchmark.num_samples=6", "run.batch_size=1", "metric=[generated_rate,frame_count]",
                   "model=flaky_oracle", "model.fail_on=[3]"], searchpath=True)
    run_dir = tmp_path / "run"
    assert run_from_config(cfg, run_dir).results["gridworld.frame_count"].n_valid == 5
    _crash_was_transient(monkeypatch, wfeval_test_plugins.FlakyOracle)

    def killed(*args, **kwargs):
        raise KeyboardInterrupt("killed as scoring starts")

    with monkeypatch.context() as m:
        m.setattr(scoring, "score_all", killed)
        with pytest.raises(KeyboardInterrupt):
            run_from_config(cfg, run_dir)
    third = run_from_config(cfg, run_dir)
    assert third.results["gridworld.frame_count"].n_valid == 6
    assert third.results["gridworld.generated_rate"].normalized_stats["ratio"] == 1.0
    rows = read_jsonl(run_dir / "metrics.jsonl")
    keys = [(r["metric_id"], r["sample_id"]) for r in rows]
    assert len(keys) == len(set(keys)) == 12  # one row per metric and sample: the stale ones are gone
    assert all(r["valid"] for r in rows)


def test_a_resume_rescores_samples_whose_old_generation_records_are_malformed(tmp_path):
    from tests.conftest import compose
    from wfeval.pipeline.runner import run_from_config

    cfg = compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false",
                   "benchmark.num_samples=4", "metric=[psnr,flicker]"])
    run_dir = tmp_path / "run"
    first = run_from_config(cfg, run_dir)
    lines = (run_dir / "generations.jsonl").read_text().splitlines()
    lines[1], lines[2] = "[1, 2]", json.dumps({"request": [1]})  # someone else's lines in the run folder
    (run_dir / "generations.jsonl").write_text("\n".join(lines) + "\n")
    again = run_from_config(cfg, run_dir)
    assert {m: (r.n_valid, r.raw_stats) for m, r in again.results.items()} == \
        {m: (r.n_valid, r.raw_stats) for m, r in first.results.items()}
    started = [e for e in read_jsonl(run_dir / "events.jsonl") if e["event"] == "phase_started" and e["phase"] == "score"]
    assert started[-1]["reused"] == 2 * 2  # samples 0 and 3 reused; 1 and 2 scored again
