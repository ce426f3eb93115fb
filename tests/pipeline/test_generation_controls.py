"""Generation controls: per-sample seeds (recorded), per-sample timeout, fail_on_error, unreadable inputs."""

from __future__ import annotations

import json
import time

import pytest
import wfeval_test_models

from tests.benchmarks._folder_helpers import bad_dataset
from tests.conftest import compose, read_jsonl
from wfeval.config.errors import ConfigError
from wfeval.pipeline.generate import GenerationStopped, failure_limit
from wfeval.pipeline.runner import run_from_config

RECORDING = ["model=python", "model.object._target_=wfeval_test_models.RecordingModel"]


def _run(tmp_path, store, *overrides, name="run", searchpath=False):
    cfg = compose([f"run.store_dir={store}", "run.progress=off", "metric=[generated_rate]", *overrides],
                  searchpath=searchpath)
    return run_from_config(cfg, output_dir=tmp_path / name)


def _seeds(tmp_path, name) -> dict[str, int]:
    return {r["request"]["sample_id"]: r["request"]["generation"]["seed"]
            for r in read_jsonl(tmp_path / name / "generations.jsonl")}


def test_one_recorded_seed_per_sample_independent_of_batching(tmp_path, store):
    _run(tmp_path, store, *RECORDING, "benchmark.num_samples=5", "run.batch_size=1", name="a")
    _run(tmp_path, store, *RECORDING, "benchmark.num_samples=5", "run.batch_size=4", name="b")
    _run(tmp_path, store, *RECORDING, "benchmark.num_samples=5", "run.seed=1", name="c")
    _run(tmp_path, store, *RECORDING, "benchmark.num_samples=5", "run.seed_mode=fixed", name="d")
    a, b, c, d = (_seeds(tmp_path, n) for n in "abcd")
    assert a == b and len(set(a.values())) == 5
    assert set(a.values()).isdisjoint(c.values())
    assert set(d.values()) == {42}  # the task's generation_defaults.seed, for every sample
    steps = read_jsonl(tmp_path / "a" / "steps.jsonl")
    assert {s["sample_id"]: s["seed"] for s in steps} == a
    calls = [c for c in wfeval_test_models.CALLS if c["event"] == "generate"]
    assert calls[-1]["seeds"] == [42] * 5  # what the model saw
    with pytest.raises(ConfigError, match="run.seed_mode: 'random' is not one of per_sample, fixed"):
        _run(tmp_path, store, *RECORDING, "benchmark.num_samples=1", "run.seed_mode=random", name="e")


def test_default_keeps_going_and_reports_every_failure(tmp_path, store):
    summary = _run(tmp_path, store, "model=flaky_oracle", "model.fail_on=[1,2,3]", "benchmark.num_samples=6",
                   searchpath=True)
    rate = summary.results["gridworld.generated_rate"]
    assert (rate.n_valid, rate.normalized_stats["ratio"]) == (6, 0.5)
    finished = [e for e in read_jsonl(tmp_path / "run" / "events.jsonl") if e.get("phase") == "generate"][-1]
    assert finished["failed"] == 3


def test_fail_on_error_count_stops_the_run_and_says_why(tmp_path, store):
    with pytest.raises(GenerationStopped, match=r"run.fail_on_error=2: stopped after 2 failed generation\(s\) of 6 "
                                                r"sample\(s\), 3 not attempted; last: sample 'gridworld-test-00002'"):
        _run(tmp_path, store, "model=flaky_oracle", "model.fail_on=[1,2,3]", "benchmark.num_samples=6",
             "run.batch_size=1", "run.fail_on_error=2", searchpath=True)
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "failed" and "fail_on_error" in manifest["error"]
    assert [s["status"] for s in read_jsonl(tmp_path / "run" / "steps.jsonl")] == ["ok", "failed", "failed"]
    resumed = _run(tmp_path, store, "model=flaky_oracle", "model.fail_on=[1,2,3]", "benchmark.num_samples=6",
                   "run.batch_size=1", searchpath=True, name="rerun")
    assert resumed.cached == 1  # the finished sample came from the cache


def test_fail_on_error_fraction_and_not_generated_does_not_count(tmp_path, store):
    summary = _run(tmp_path, store, "model=flaky_oracle", "model.fail_on=[1,2]", "benchmark.num_samples=8",
                   "run.fail_on_error=0.25", searchpath=True)  # 2 of 8 is not more than 25 %
    assert summary.results["gridworld.generated_rate"].normalized_stats["ratio"] == 0.75
    with pytest.raises(GenerationStopped):
        _run(tmp_path, store, "model=flaky_oracle", "model.fail_on=[1,2,3]", "benchmark.num_samples=8",
             "run.fail_on_error=0.25", searchpath=True, name="stop")
    missing = _run(tmp_path, store, *RECORDING, "+model.object.missing=[1,2,3]", "benchmark.num_samples=4",
                   "run.fail_on_error=true", name="missing")
    assert missing.results["gridworld.generated_rate"].normalized_stats["ratio"] == 0.25
    assert [failure_limit(v, 10) for v in (None, False, True, 3, 0.1, 0.5)] == [None, None, 1, 3, 2, 6]
    for bad in (0, -1, 1.5, "yes"):
        with pytest.raises(ValueError, match="run.fail_on_error"):
            failure_limit(bad, 10)


def test_sample_timeout_interrupts_a_slow_sample_and_not_its_neighbours(tmp_path, store):
    started = time.monotonic()
    summary = _run(tmp_path, store, "model=python", "model.object._target_=wfeval_test_models.SpinningModel",
                   "+model.object.slow=[00001]", "benchmark.num_samples=3", "run.batch_size=2",
                   "run.sample_timeout_s=0.3")
    assert time.monotonic() - started < 15
    samples = {s["sample_id"]: s for s in read_jsonl(tmp_path / "run" / "samples.jsonl")}
    slow = samples["gridworld-test-00001"]
    assert slow["success"] is False and slow["stop_reason"] == "timeout"
    assert "GenerationTimeout: generation exceeded its time limit of 0.3 s" in slow["metadata"]["generation_error"]
    assert samples["gridworld-test-00000"]["success"] and samples["gridworld-test-00002"]["success"]
    assert summary.results["gridworld.generated_rate"].normalized_stats["ratio"] == 2 / 3
    started_event = [e for e in read_jsonl(tmp_path / "run" / "events.jsonl") if e["event"] == "phase_started"][0]
    assert started_event["sample_timeout_s"] == 0.3 and started_event["sample_timeout_enforced"] is True
    with pytest.raises(ConfigError, match="run.sample_timeout_s"):
        _run(tmp_path, store, *RECORDING, "benchmark.num_samples=1", "run.sample_timeout_s=-1", name="bad")


def test_samples_with_unreadable_inputs_never_reach_the_model(tmp_path, store):
    root = bad_dataset(tmp_path / "data")
    wfeval_test_models.CALLS.clear()
    summary = _run(tmp_path, store, *RECORDING, "benchmark=folder", f"benchmark.dataset_root={root}",
                   "run.fail_on_error=true")
    seen = [i for c in wfeval_test_models.CALLS if c["event"] == "generate" for i in c["ids"]]
    assert sorted(seen) == [f"gridworld-test-0000{i}" for i in range(4)]
    # 2 unreadable samples and 3 refused lines (each counts against coverage), none sent to the model
    assert summary.results["gridworld_tiny.generated_rate"].n_skipped == 2 + 3
