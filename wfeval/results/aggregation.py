"""Per-metric aggregation: the metric's own ``aggregate``, or the aggregation a config chose.

A config may choose another aggregator, statistics or interval for a metric that aggregates
with :func:`wfeval.metrics.base.default_aggregate` (``metric.<id>.aggregation``). The choice is
checked when the run is built and then passed explicitly, as an :class:`Aggregation`, to
:func:`aggregate_metric`; the metric object itself is never changed.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

from wfeval.api import AggregateResult, MetricResult
from wfeval.metrics.base import BaseMetric, default_aggregate
from wfeval.metrics.outcome_columns import OutcomeColumns
from wfeval.metrics.outcomes import errored
from wfeval.storage.rundir import JsonlRows


@dataclass(frozen=True)
class Aggregation:
    """How per-sample values become an aggregate (see :func:`wfeval.stats.summarize`)."""

    aggregator: str
    statistics: tuple[str, ...]
    ci: str

    def to_dict(self) -> dict[str, Any]:
        return {"aggregator": self.aggregator, "statistics": list(self.statistics), "ci": self.ci}


class MetricSet(dict):
    """Metric objects by id, with the aggregation chosen for each (``None``: the metric's own)."""

    def __init__(self, metrics: Mapping[str, Any] = (), aggregation: Mapping[str, Aggregation | None] = (),
                 on_failure: Mapping[str, str] = ()):
        super().__init__(metrics)
        self.aggregation: dict[str, Aggregation | None] = {m: dict(aggregation).get(m) for m in self}
        # what a failed generation does to each metric: "exclude" (default) or "worst" (a penalised mean)
        self.on_failure: dict[str, str] = {m: dict(on_failure).get(m, "exclude") for m in self}
        # a stored run's metric rebuilt without its recorded options that name code (never run from a folder)
        self.code_left_out: dict[str, tuple[str, ...]] = {}
        # measurement id -> the config node (metric.<id>) it came from (imagined_probe_r2_k4: imagined_probe_r2)
        self.node_of: dict[str, str] = {}

    def effective_aggregation(self, metric_id: str) -> Aggregation | None:
        """What aggregates this metric's rows: the chosen aggregation, else the declared one."""
        return self.aggregation.get(metric_id) or declared_aggregation(self[metric_id])


def declared_aggregation(metric: Any) -> Aggregation | None:
    """The aggregation a metric declares, when it aggregates with the default method."""
    if not isinstance(metric, BaseMetric) or type(metric).aggregate is not BaseMetric.aggregate:
        return None
    return Aggregation(metric.aggregator, tuple(metric.statistics), metric.ci)


def resolve_aggregation(metric: Any, choice: Mapping[str, Any] | None) -> Aggregation | None:
    """The aggregation chosen for ``metric`` (None: its own ``aggregate`` method decides).

    Raises ``ValueError`` for a choice the metric cannot honour or a name ``wfeval.stats`` does
    not know, so that a bad choice is refused before anything runs.
    """
    from wfeval import stats

    chosen = {k: v for k, v in (choice or {}).items() if v is not None}
    if not chosen:
        return None
    declared = declared_aggregation(metric)
    if declared is None:
        raise ValueError(f"{type(metric).__name__} aggregates with its own method, which these settings "
                         "cannot change")
    merged = dataclasses.replace(declared, **{k: tuple(v) if k == "statistics" else v for k, v in chosen.items()})
    stats.summarize([0.0, 1.0], aggregator=merged.aggregator, statistics=merged.statistics, ci=merged.ci)
    return merged


def aggregate_metric(metric_id: str, metric: Any, rows: Sequence[MetricResult] | OutcomeColumns,
                     aggregation: Aggregation | None = None) -> AggregateResult:
    """The aggregate of one metric's rows; if aggregation raises, an invalid aggregate that says why.

    ``rows`` may be a metric's :class:`~wfeval.metrics.outcome_columns.OutcomeColumns` when it aggregates
    with the default method (a streaming run keeps only those), or rows read lazily from a file."""
    try:
        if aggregation is None:  # lazily read rows stay lazy: a copy would hold every row at once
            agg = metric.aggregate(rows if isinstance(rows, (OutcomeColumns, JsonlRows)) else list(rows))
        else:
            agg = default_aggregate(metric.name, rows, aggregator=aggregation.aggregator,
                                    statistics=aggregation.statistics, ci=aggregation.ci,
                                    confidence=metric.confidence, seed=metric.seed,
                                    bounds=getattr(metric, "bounds", None))
        if not isinstance(agg, AggregateResult):
            raise TypeError(f"aggregate returned {type(agg).__name__}, expected AggregateResult")
    except Exception as exc:
        failed = errored("*", metric_id, exc)
        return AggregateResult(
            metric_id=metric_id, n_total=len(rows), valid=False,
            diagnostics={"reason": failed.skip_reason, "traceback": failed.diagnostics["traceback"]},
        )
    return agg if agg.metric_id == metric_id else dataclasses.replace(agg, metric_id=metric_id)


def headline(agg: AggregateResult | Mapping[str, Any]) -> float | None:
    """The one number an aggregate stands for (None when it is invalid): the aggregator's value,
    else the mean of the normalized values. Tables, scorecards and leaderboards all use this."""
    data = agg.to_dict() if isinstance(agg, AggregateResult) else agg
    if not data.get("valid"):
        return None
    value = (data.get("diagnostics") or {}).get("value")
    return value if value is not None else (data.get("normalized_stats") or {}).get("mean")
