"""Scoring: every metric over every stored generation, each (metric, sample) isolated.

A metric that raises on one item records ``error`` (traceback in diagnostics) and the run goes
on; an item without the metric's required artifacts is a ``skip`` with the reason.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Callable, Mapping, Sequence

from wfeval.api import AggregateResult, GenerationRequest, GenerationResult, MetricResult
from wfeval.benchmarks.base import INPUT_ERROR
from wfeval.metrics.outcomes import errored, skipped


def _missing_reason(missing: list[str], result: GenerationResult) -> str:
    reason = f"missing required artifact(s) {', '.join(missing)}"
    if result.status != "ok":
        reason += f" (generation {result.status}" + (f": {result.error})" if result.error else ")")
    return reason


def score_one(metric_id: str, metric: Any, request: GenerationRequest, result: GenerationResult) -> MetricResult:
    if result.stop_reason == INPUT_ERROR:  # the benchmark could not provide the inputs: not the model's fault
        return skipped(request.sample_id, metric_id, "input unavailable (benchmark data problem)",
                       input_error=result.error)
    missing = [k for k in getattr(metric, "required_artifacts", ()) if k not in result.artifacts]
    if missing:
        return skipped(request.sample_id, metric_id, _missing_reason(missing, result))
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
) -> dict[str, list[MetricResult]]:
    """Per metric id, one result per pair (reusing ``done[(metric_id, sample_id)]``)."""
    out: dict[str, list[MetricResult]] = {}
    for metric_id, metric in metrics.items():
        rows = []
        for request, result in pairs:
            previous = done.get((metric_id, request.sample_id))
            row = previous or score_one(metric_id, metric, request, result)
            on_result(row, previous is not None)
            rows.append(row)
        out[metric_id] = rows
    return out


def aggregate_one(metric_id: str, metric: Any, results: Sequence[MetricResult]) -> AggregateResult:
    """The metric's own aggregate; if it raises, an invalid aggregate that says why."""
    try:
        agg = metric.aggregate(list(results))
        if not isinstance(agg, AggregateResult):
            raise TypeError(f"aggregate returned {type(agg).__name__}, expected AggregateResult")
    except Exception as exc:
        failed = errored("*", metric_id, exc)
        return AggregateResult(
            metric_id=metric_id, n_total=len(results), valid=False,
            diagnostics={"reason": failed.skip_reason, "traceback": failed.diagnostics["traceback"]},
        )
    return agg if agg.metric_id == metric_id else dataclasses.replace(agg, metric_id=metric_id)
