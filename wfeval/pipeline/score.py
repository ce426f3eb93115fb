"""Scoring: every metric over every stored generation, each (metric, sample) isolated.

A metric that raises on one item records ``error`` (traceback in diagnostics) and the run goes
on; an item without the metric's required artifacts is a ``skip`` with the reason.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping, Sequence

from wfeval.api import GenerationRequest, GenerationResult, MetricResult
from wfeval.benchmarks.base import INPUT_ERROR
from wfeval.metrics.outcomes import errored, scored, skipped
from wfeval.rundir import RunDirectory, read_jsonl


def _missing_reason(missing: list[str], result: GenerationResult) -> str:
    reason = f"missing required artifact(s) {', '.join(missing)}"
    if result.status != "ok":
        reason += f" (generation {result.status}" + (f": {result.error})" if result.error else ")")
    return reason


def reusable_rows(rundir: RunDirectory, metrics: Mapping[str, Any], records: Sequence[Mapping[str, Any]],
                  previous_manifest: Mapping[str, Any] | None) -> dict[tuple[str, str], MetricResult]:
    """Metric rows a resumed run keeps: those of samples whose generation is the one they scored
    (same ``generations.jsonl`` record), for metrics whose version did not change."""
    if previous_manifest is None:
        return {}
    scored_before = {row["request"]["sample_id"]: row for row in read_jsonl(rundir.file("generations.jsonl"))}
    unchanged = {rec["request"]["sample_id"] for rec in records if scored_before.get(rec["request"]["sample_id"]) == rec}
    versions_before = {m: v.get("version") for m, v in previous_manifest.get("metrics", {}).items()}
    done = {}
    for row in read_jsonl(rundir.file("metrics.jsonl")):
        result = MetricResult.from_dict(row)
        metric = metrics.get(result.metric_id)
        if (result.sample_id in unchanged and metric is not None
                and versions_before.get(result.metric_id) == str(metric.version)):
            done[(result.metric_id, result.sample_id)] = result
    return done


def _penalised(metric_id: str, metric: Any, request: GenerationRequest, result: GenerationResult) -> MetricResult:
    """A failed generation scored at the metric's worst value (``metric.<id>.on_failure=worst``)."""
    from wfeval.metrics.base import worst_value

    worst = worst_value(metric)
    return scored(request.sample_id, metric_id, worst, passed=False,
                  diagnostics={"penalised": True, "on_failure": "worst", "generation_status": result.status,
                               "generation_error": result.error})


def score_one(metric_id: str, metric: Any, request: GenerationRequest, result: GenerationResult,
              on_failure: str = "exclude") -> MetricResult:
    if result.stop_reason == INPUT_ERROR:  # the benchmark could not provide the inputs: not the model's fault
        return skipped(request.sample_id, metric_id, "input unavailable (benchmark data problem)",
                       category="input unavailable (benchmark data problem)", input_error=result.error)
    missing = [k for k in getattr(metric, "required_artifacts", ()) if k not in result.artifacts]
    if missing and result.status != "ok" and on_failure == "worst":
        return _penalised(metric_id, metric, request, result)
    if missing:
        category = f"missing required artifact(s) {', '.join(missing)}" + \
            (f" (generation {result.status})" if result.status != "ok" else "")
        return skipped(request.sample_id, metric_id, _missing_reason(missing, result), category=category)
    try:
        out = metric.compute_sample(request, result)
        if not isinstance(out, MetricResult):
            raise TypeError(f"compute_sample returned {type(out).__name__}, expected MetricResult")
    except Exception as exc:
        return errored(request.sample_id, metric_id, exc)
    if out.metric_id != metric_id or out.sample_id != request.sample_id:
        out = dataclasses.replace(out, metric_id=metric_id, sample_id=request.sample_id)
    return out


def score_all(
    metrics: Mapping[str, Any],
    pairs: Sequence[tuple[GenerationRequest, GenerationResult]],
    *,
    done: Mapping[tuple[str, str], MetricResult],
    on_result: Callable[[MetricResult, bool], None],
    cache: Any = None,
) -> dict[str, list[MetricResult]]:
    """Per metric id, one result per pair (reusing ``done[(metric_id, sample_id)]``, then the
    store's metric-result ``cache``; arrays read ahead: :mod:`wfeval.result_cache`); a
    :class:`~wfeval.results.MetricSet` also says what a failed generation does to each metric."""
    from wfeval.result_cache import score_metrics

    on_failure = getattr(metrics, "on_failure", {})

    def one(metric_id: str, metric: Any, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        return score_one(metric_id, metric, request, result, on_failure.get(metric_id, "exclude"))

    return score_metrics(metrics, pairs, done=done, on_result=on_result, score_one=one, cache=cache,
                         variants={m: {"on_failure": on_failure.get(m, "exclude")} for m in metrics})
