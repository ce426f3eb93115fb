"""What a run prints: units beside values, why samples failed (model and metrics), progress in
samples, and the eligibility of a built-in task on its own defaults."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.conftest import SUPPORT_CONF, compose, only_run_dir, read_jsonl, run_cli
from wfeval.api import GenerationResult
from wfeval.metrics.base import default_aggregate
from wfeval.metrics.outcomes import errored, scored, skipped
from wfeval.report.table import FailureTally, failure_lines, results_table


def test_the_console_says_why_samples_failed_for_the_model_and_for_metrics(tmp_path):
    proc = run_cli([f"hydra.searchpath=[{SUPPORT_CONF}]", "model=python",
                    "model.object._target_=wfeval_test_models.RecordingModel", "+model.object.missing=[2]",
                    "+model.object.broken=[3,4]", "metric=[psnr,generated_rate,frame_count]",
                    "+metric.frame_count.raise_on=[1]", "benchmark.num_samples=6", "run.progress=off",
                    "run.report=false", f"run.store_dir={tmp_path / 'store'}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    run = only_run_dir(tmp_path / "outputs" / "runs")
    samples = read_jsonl(run / "samples.jsonl")
    reasons = Counter(r["metadata"]["generation_error"] for r in samples if not r["success"])
    assert sum(reasons.values()) == 3
    lines = proc.stdout.splitlines()
    start = lines.index("model: 3 of 6 samples failed (every metric skips them or scores them as failed):")
    model_lines = lines[start + 1:start + 3]
    # "cannot do <id>" for two samples is one reason (the id taken out), "nothing for <id>" another
    assert any(line.startswith("  2× ") and "ValueError: cannot do …" in line for line in model_lines), model_lines
    assert any(line.startswith("  1× ") and "nothing for …" in line for line in model_lines), model_lines
    metric_lines = lines[lines.index("metrics: items not scored (skip / error):") + 1:]
    assert metric_lines[0] == "  frame_count: 1× error: ZeroDivisionError: simulated metric bug"
    assert not any("generation" in line for line in metric_lines[:2])  # a failed generation is said once, above


def test_failure_lines_are_bounded_and_empty_when_nothing_failed():
    tally = FailureTally()
    for i in range(10):
        tally.add(f"s{i}", GenerationResult(sample_id=f"s{i}", status="failed", error=f"kind {i % 5} on s{i}"))
    ok = default_aggregate("psnr", [scored("s0", "psnr", 30.0)])
    lines = failure_lines(tally, {"b.psnr": ok}, 10)
    assert lines[0] == "model: 10 of 10 samples failed (every metric skips them or scores them as failed):"
    assert len(lines) == 1 + 3 + 1 and lines[-1].startswith("  … 2 more reasons")
    assert failure_lines(FailureTally(), {"b.psnr": ok}, 1) == []
    rows = [skipped("s1", "psnr", "no reference video"), errored("s2", "psnr", ValueError("bad s2")),
            skipped("s3", "ssim", "no reference video"), errored("s4", "psnr", ValueError("bad s4")),
            skipped("s5", "ssim", "missing required artifact(s) generated_video (generation failed: boom)")]
    psnr = default_aggregate("psnr", [rows[0], rows[1], rows[3], scored("s0", "psnr", 1.0)])
    ssim = default_aggregate("ssim", [rows[2], rows[4], scored("s0", "ssim", 1.0)])
    # from the aggregates alone (replay): their skip categories
    lines = failure_lines(FailureTally(), {"b.psnr": psnr, "b.ssim": ssim}, 3)
    assert "  psnr, ssim: 1× no reference video" in lines and "  psnr: 2× error: ValueError" in lines
    tally = FailureTally()  # as a run scores: the rows' own messages, the sample's id taken out
    for row in rows:
        tally.add_metric(row)
    lines = failure_lines(tally, {"b.psnr": psnr, "b.ssim": ssim}, 3)
    assert lines == ["metrics: items not scored (skip / error):", "  psnr, ssim: 1× no reference video",
                     "  psnr: 2× error: ValueError: bad …"]  # the skip after a failed generation is not repeated


def test_units_are_printed_beside_values():
    ok = default_aggregate("psnr", [scored("s0", "psnr", 30.0), scored("s1", "psnr", 32.0)])
    text = results_table({"b.psnr": ok, "b.ssim": ok}, units={"b.psnr": "dB"})
    line = next(line for line in text.splitlines() if line.startswith("b.psnr"))
    assert "31 dB" in line
    assert " dB" not in next(line for line in text.splitlines() if line.startswith("b.ssim"))


def test_an_autoregressive_run_prints_latency_in_milliseconds_and_progress_in_samples(tmp_path):
    proc = run_cli(["protocol=autoregressive", "metric=[psnr,step_latency]", "benchmark.num_samples=3",
                    "run.progress=log", "run.report=false", f"run.store_dir={tmp_path / 'store'}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    latency = next(line for line in proc.stdout.splitlines() if line.startswith("gridworld.step_latency"))
    assert latency.split()[2] == "ms"
    assert next(line for line in proc.stdout.splitlines() if line.startswith("gridworld.psnr")).split()[2] == "dB"
    assert "score: 3/3 samples in" in proc.stderr  # samples, not sample × metric pairs (6)


@pytest.mark.parametrize("task, primary", [("goal_reaching", "goal_success"), ("memory", "revisit_error"),
                                           ("probing", "probe_r2"),
                                           ("policy_evaluation", "policy_rank_correlation"),
                                           ("controllability", "action_sensitivity")])
def test_each_task_is_eligible_on_its_own_defaults_and_ranked_by_its_own_measure(tmp_path, task, primary):
    """The samples a task builds have the hash the rules hold them to (the task's own pin where its
    samples differ from the benchmark's default task), and leaderboards rank the task by its own
    measure (a full run's verdict: the golden script's goal_reaching case, perf/results_golden.py)."""
    from wfeval.pipeline import build
    from wfeval.pipeline.select import select_requests
    from wfeval.results import dataset_hash
    from wfeval.storage.artifacts import ArtifactStore

    cfg = compose([f"task={task}"])
    requests = select_requests(build.build_benchmark(cfg), store=ArtifactStore(tmp_path),
                                     task=build.build_task(cfg), protocol=build.build_protocol(cfg), limit=None,
                                     shard=None)
    rules = build.benchmark_rules(cfg)
    assert len(requests) == rules["evidence"]["min_valid"]["default"] == 32
    assert dataset_hash(requests) == rules["evidence"]["dataset_hash"]
    pinned = ((cfg.task.get("metadata") or {}).get("dataset_hash") or {}).get("gridworld")
    if task in ("goal_reaching", "policy_evaluation", "memory", "probing"):  # other samples than the default task's
        assert rules["evidence"]["dataset_hash"] == pinned != cfg.benchmark.evidence.dataset_hash
    assert rules["scorecard"]["primary"] == primary
    plain = build.benchmark_rules(compose([]))  # the default task keeps the benchmark's own hash and primary
    assert plain["evidence"]["dataset_hash"] == cfg.benchmark.evidence.dataset_hash
    assert plain["scorecard"]["primary"] == "psnr"
