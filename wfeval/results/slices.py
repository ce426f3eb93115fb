"""Group slices: each metric's aggregate per ``key=value`` group (``benchmark.group_by``)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Mapping, Sequence

from wfeval.api import GenerationRequest, MetricResult
from wfeval.results.aggregation import Aggregation, aggregate_metric

GROUP_KEYS = ("split", "task_id", "benchmark_id", "protocol")


def group_value(request: GenerationRequest, key: str) -> str:
    """``split``, ``task_id``, ``benchmark_id``, ``protocol`` or ``metadata.<key>`` of a request, as text."""
    if key.startswith("metadata."):
        value: Any = request.metadata.get(key.removeprefix("metadata."))
    elif key in GROUP_KEYS:
        value = getattr(request, key)
    else:
        raise ValueError(f"benchmark.group_by: unknown key {key!r}; use split, task_id, benchmark_id, "
                         "protocol or metadata.<key>")
    return "(none)" if value is None else str(value)


def slices(metrics: Mapping[str, Any], per_metric: Mapping[str, Sequence[MetricResult]],
           requests: Mapping[str, GenerationRequest], group_by: Sequence[str],
           aggregation: Mapping[str, Aggregation | None]) -> dict[str, dict]:
    """Per metric id, per ``key=value`` group: the metric's aggregate over that group."""
    out: dict[str, dict] = {}
    for metric_id, rows in per_metric.items():
        groups: dict[str, dict[str, list[MetricResult]]] = {}
        for key in group_by:
            by_value: dict[str, list[MetricResult]] = defaultdict(list)
            for row in rows:
                by_value[group_value(requests[row.sample_id], key)].append(row)
            groups[key] = dict(sorted(by_value.items()))
        out[metric_id] = {
            f"{key}={value}": aggregate_metric(metric_id, metrics[metric_id], subset,
                                               aggregation.get(metric_id)).to_dict()
            for key, values in groups.items() for value, subset in values.items()
        }
    return out
