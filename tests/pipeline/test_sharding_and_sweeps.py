"""Shards are disjoint slices whose merge equals the single run; sweeps summarise every job."""

from __future__ import annotations

import json

import pytest

from tests.conftest import cli_env, only_run_dir, run_cli, run_python
from wfeval.pipeline.shard import parse_shard, shard_slice


def test_shards_are_disjoint_contiguous_and_cover_every_sample_in_order():
    items = list(range(11))
    parts = [shard_slice(items, f"{i}/3") for i in range(3)]
    assert parts == [[0, 1, 2], [3, 4, 5, 6], [7, 8, 9, 10]]
    assert shard_slice(items, None) == items
    assert shard_slice(list(range(2)), "2/3") == [1]  # more shards than samples: some are empty
    for bad in ("3/3", "1", "-1/2", "a/b", "0/0"):
        with pytest.raises(ValueError, match="run.shard"):
            parse_shard(bad)


def _results(path):
    data = json.loads(path.read_text())
    return {k: data[k] for k in ("results", "slices", "scorecard", "evidence", "metrics", "config_hash")}


def test_a_two_shard_sweep_merges_itself_into_the_single_run_result(tmp_path):
    common = [f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "benchmark.num_samples=8"]
    proc = run_cli(["-m", "run.shard=0/2,1/2", *common], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    sweep = only_run_dir(tmp_path / "outputs" / "multirun")
    merged = sweep / "merged" / "results.json"
    assert "shards merged into" in (sweep / "sweep_summary.md").read_text()
    single = run_cli(common, cwd=tmp_path)
    assert single.returncode == 0, single.stderr
    reference = only_run_dir(tmp_path / "outputs" / "runs") / "results.json"
    assert _results(merged) == _results(reference)
    shard_sizes = [json.loads((sweep / d / "manifest.json").read_text())["benchmark"]["n_samples"]
                   for d in ("0_oracle", "1_oracle")]
    assert shard_sizes == [4, 4]
    # merging that sweep again by hand (README) reads its shards, not the merged run it already holds
    again = run_python(["-m", "wfeval.merge", str(sweep), "--out", str(tmp_path / "again")],
                       cwd=tmp_path, env=cli_env())
    assert again.returncode == 0, again.stderr
    assert again.stdout.startswith(f"merged 2 shards into {tmp_path / 'again'} (8 samples")
    assert _results(tmp_path / "again" / "results.json") == _results(reference)


def test_merge_refuses_an_incomplete_set_of_shards(tmp_path):
    proc = run_cli(["run.shard=0/2", f"run.store_dir={tmp_path / 'store'}", "benchmark.num_samples=4"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    run = only_run_dir(tmp_path / "outputs" / "runs")
    merge = run_python(["-m", "wfeval.merge", str(run), "--out", str(tmp_path / "m")], cwd=tmp_path, env=cli_env())
    assert merge.returncode == 2
    assert "shards do not cover one run exactly once (found 0/2)" in merge.stderr


def test_a_failed_job_is_listed_and_does_not_hide_the_others(tmp_path):
    # 2 jobs: the static model, and the same with a target that cannot be imported
    proc = run_cli(["-m", "model=static", f"run.store_dir={tmp_path / 'store'}", "benchmark.num_samples=3",
                    "run.progress=off", "model._target_=wfeval.benchmarks.gridworld.baselines.StaticModel,no.such.Model"],
                   cwd=tmp_path)
    assert proc.returncode == 1
    sweep = max((tmp_path / "outputs" / "multirun").iterdir())
    summary = (sweep / "sweep_summary.md").read_text()
    assert "2 jobs: 1 completed, 1 failed" in summary
    assert summary.count("- FAILED") == 1 and "no.such.Model" in summary
    assert "static" in summary.split("```")[1]  # the completed job is still ranked
    assert "1 sweep job(s) failed" in proc.stderr


def test_joblib_launcher_runs_jobs_in_parallel_processes_and_summarises(tmp_path):
    proc = run_cli(["-m", "model=oracle,static,random_actions", "hydra/launcher=joblib", "hydra.launcher.n_jobs=2",
                    f"run.store_dir={tmp_path / 'store'}", "benchmark.num_samples=4", "run.progress=off"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    sweep = only_run_dir(tmp_path / "outputs" / "multirun")
    assert "3 jobs: 3 completed, 0 failed" in (sweep / "sweep_summary.md").read_text()
    hosts = {json.loads((sweep / d / "manifest.json").read_text())["pid"] for d in ("0_oracle", "1_static")}
    assert len(hosts) == 2  # two worker processes


def test_submitit_local_launcher_runs_the_same_sweep(tmp_path):
    # the submitit folder without %j, as docs/scaling.md says: submitit's local controller races the
    # submitting process for the %j folder on a loaded machine
    proc = run_cli(["-m", "model=oracle,static", "hydra/launcher=submitit_local",
                    "hydra.launcher.submitit_folder=${hydra.sweep.dir}/.submitit",
                    f"run.store_dir={tmp_path / 'store'}", "benchmark.num_samples=4", "run.progress=off"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    sweep = only_run_dir(tmp_path / "outputs" / "multirun")
    assert "2 jobs: 2 completed, 0 failed" in (sweep / "sweep_summary.md").read_text()


def test_fvd_merges_its_statistics_across_shards_into_the_single_run_value(tmp_path):
    from tests.features._weights import require_i3d_weights

    require_i3d_weights()
    # 4 samples: 2 per shard, the fewest an FVD is computed from
    common = ["model=static", "metric=[fvd,psnr]", "benchmark.num_samples=4", "metric.fvd.bootstrap=200",
              f"metric.fvd.feature_dir={tmp_path / 'features'}", f"run.store_dir={tmp_path / 'store'}",
              "run.progress=off"]
    sharded = run_cli(["-m", "run.shard=0/2,1/2", *common], cwd=tmp_path, timeout=900)
    assert sharded.returncode == 0, sharded.stderr[-3000:]
    single = run_cli(common, cwd=tmp_path, timeout=900)
    assert single.returncode == 0, single.stderr[-3000:]
    merged = json.loads((only_run_dir(tmp_path / "outputs" / "multirun") / "merged" / "results.json").read_text())
    reference = json.loads((only_run_dir(tmp_path / "outputs" / "runs") / "results.json").read_text())
    assert merged["results"]["gridworld.fvd"]["valid"] is True
    assert merged["results"]["gridworld.fvd"]["n_valid"] == 4
    assert merged["results"] == reference["results"]  # FVD value, its bootstrap CI and every other aggregate


def test_a_bad_shard_spec_is_a_config_error_before_any_sample_is_prepared(tmp_path):
    proc = run_cli(["run.shard=2/2", f"run.store_dir={tmp_path / 'store'}"], cwd=tmp_path)
    assert proc.returncode == 2
    assert "Config error: run.shard: need 0 <= i < n and n >= 1, got 2/2" in proc.stderr
    assert not (tmp_path / "store" / "objects").exists()
