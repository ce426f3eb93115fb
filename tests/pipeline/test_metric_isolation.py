"""A metric raising on one item, or a model failing on one sample, never stops the run."""

from __future__ import annotations

import json

from tests.conftest import compose, read_jsonl
from wfeval.pipeline.runner import run_from_config


def _run(tmp_path, store, overrides):
    cfg = compose([f"run.store_dir={store}", "run.progress=off", "benchmark.num_samples=8", *overrides],
                  searchpath=True)
    return run_from_config(cfg, output_dir=tmp_path / "run")


def test_a_metric_raising_on_one_item_records_error_and_the_run_continues(tmp_path, store):
    summary = _run(tmp_path, store, ["metric=[frame_count,generated_rate]", "metric.frame_count.raise_on=[2]"])
    frames = summary.results["gridworld.frame_count"]
    assert (frames.n_total, frames.n_valid, frames.n_skipped) == (8, 7, 1)
    assert frames.normalized_stats["mean"] == 16.0
    assert frames.skip_breakdown == {"error: ZeroDivisionError": 1}
    rows = [r for r in read_jsonl(tmp_path / "run" / "metrics.jsonl") if r["metric_id"] == "frame_count"]
    broken = next(r for r in rows if r["sample_id"] == "gridworld-test-00002")
    assert broken["valid"] is False and broken["diagnostics"]["status"] == "error"
    assert "ZeroDivisionError: simulated metric bug" in broken["diagnostics"]["traceback"]
    assert summary.results["gridworld.generated_rate"].normalized_stats["ratio"] == 1.0


def test_a_failed_generation_is_a_fail_for_generated_rate_and_a_skip_for_metrics_needing_video(tmp_path, store):
    summary = _run(tmp_path, store, ["model=flaky_oracle", "model.fail_on=[3]",
                                     "metric=[generated_rate,frame_count]"])
    rate = summary.results["gridworld.generated_rate"]
    assert (rate.n_valid, rate.normalized_stats["ratio"]) == (8, 7 / 8)
    assert rate.diagnostics["status_counts"] == {"ok": 7, "fail": 1, "skip": 0, "error": 0}
    frames = summary.results["gridworld.frame_count"]
    assert (frames.n_valid, frames.n_skipped) == (7, 1)
    # counted by kind; the sample's own reason (with the model's error) stays on its row
    assert frames.skip_breakdown == {"missing required artifact(s) generated_video (generation failed)": 1}
    [row] = [r for r in read_jsonl(tmp_path / "run" / "metrics.jsonl")
             if r["metric_id"] == "frame_count" and r["sample_id"] == "gridworld-test-00003"]
    assert row["skip_reason"].startswith("missing required artifact(s) generated_video (generation failed: RuntimeError")
    sample = next(s for s in read_jsonl(tmp_path / "run" / "samples.jsonl")
                  if s["sample_id"] == "gridworld-test-00003")
    assert sample["success"] is False and "simulated model crash" in sample["metadata"]["generation_error"]


def test_all_items_skipped_gives_an_invalid_aggregate_with_the_reason_not_a_nan(tmp_path, store):
    summary = _run(tmp_path, store, ["metric=[fvd]", "metric.fvd.fetch=false",
                                     f"metric.fvd.cache_dir={tmp_path / 'no_weights'}"])
    fvd = summary.results["gridworld.fvd"]
    assert fvd.valid is False and fvd.stderr is None and fvd.confidence_interval == {}
    assert fvd.diagnostics["reason"] == "no item was scored: all 8 skipped or errored"
    text = (tmp_path / "run" / "results.json").read_text()
    assert "NaN" not in text and json.loads(text)["results"]["gridworld.fvd"]["valid"] is False


def test_each_metric_is_closed_once_after_the_last_sample_and_a_failing_close_keeps_the_scores(tmp_path, store):
    """A metric's optional close() (pose_error's: its Memory Maze simulators back to the pool) runs once
    a run, after scoring; one that raises is an event naming it, and the run's numbers stand."""
    from wfeval_test_plugins import CLOSED

    CLOSED.clear()
    summary = _run(tmp_path, store, ["metric=[frame_count,generated_rate]"])
    assert CLOSED == ["frame_count"] and summary.results["gridworld.frame_count"].n_valid == 8
    CLOSED.clear()
    summary = run_from_config(compose([f"run.store_dir={store}", "run.progress=off", "benchmark.num_samples=8",
                                       "metric=[frame_count,generated_rate]", "metric.frame_count.close_raises=true"],
                                      searchpath=True), output_dir=tmp_path / "failing_close")
    assert CLOSED == ["frame_count"]
    assert summary.results["gridworld.frame_count"].normalized_stats["mean"] == 16.0
    events = [e for e in read_jsonl(tmp_path / "failing_close" / "events.jsonl") if e.get("event") == "metric_close_failed"]
    assert [(e["metric"], e["error"]) for e in events] == [("frame_count", "OSError: simulated close failure")]
