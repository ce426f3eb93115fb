"""Re-scoring a stored run needs no model; `-m model=a,b,c` sweeps with the basic launcher."""

from __future__ import annotations

import json

from tests.conftest import SUPPORT_CONF, only_run_dir, read_jsonl, run_cli


def test_rescoring_a_run_with_another_metric_never_builds_the_model(tmp_path):
    first = run_cli(["benchmark.num_samples=6", f"run.store_dir={tmp_path / 'store'}"], cwd=tmp_path)
    assert first.returncode == 0, first.stderr
    source = only_run_dir(tmp_path / "outputs" / "runs")
    proc = run_cli([f"run.from_run={source}", f"hydra.searchpath=[{SUPPORT_CONF}]",
                    "metric=[frame_count,artifact_count]", "model._target_=no.such.Model",
                    f"run.store_dir={tmp_path / 'store'}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    rescored = max((tmp_path / "outputs" / "runs").iterdir())
    manifest = json.loads((rescored / "manifest.json").read_text())
    assert manifest["source_run"] == str(source)
    assert manifest["model"]["name"] == "oracle"
    assert not (rescored / "steps.jsonl").exists()  # nothing was generated
    results = json.loads((rescored / "results.json").read_text())["results"]
    assert results["gridworld.frame_count"]["normalized_stats"]["mean"] == 16.0
    assert results["gridworld.frame_count"]["n_valid"] == 6
    assert results["gridworld.artifact_count"]["n_valid"] == 6


def test_rescoring_a_folder_that_is_not_a_run_exits_2(tmp_path):
    proc = run_cli([f"run.from_run={tmp_path}"], cwd=tmp_path)
    assert proc.returncode == 2
    assert "is not a finished wfeval run" in proc.stderr


def test_multirun_over_three_models_writes_three_runs(tmp_path):
    proc = run_cli(["-m", "model=oracle,static,random_actions", "benchmark.num_samples=4",
                    f"run.store_dir={tmp_path / 'store'}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    sweep = only_run_dir(tmp_path / "outputs" / "multirun")
    jobs = sorted(p.name for p in sweep.iterdir() if p.is_dir())
    assert jobs == ["0_oracle", "1_static", "2_random_actions"]
    for job in jobs:
        results = json.loads((sweep / job / "results.json").read_text())
        assert results["model"]["name"] == job.split("_", 1)[1]
        assert results["results"]["gridworld.generated_rate"]["n_valid"] == 4
        assert len(read_jsonl(sweep / job / "samples.jsonl")) == 4
