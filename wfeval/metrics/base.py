"""A convenient base for metrics: declared metadata plus the default aggregation.

Any object satisfying :class:`wfeval.api.Metric` works in a run; subclassing is optional.
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from typing import Any, ClassVar, Sequence

from wfeval import stats
from wfeval.api import AggregateResult, MetricResult, MetricSpec
from wfeval.metrics.outcome_columns import OutcomeColumns, numeric, skip_key

_skip_key, _numeric = skip_key, numeric  # the names other modules import

ON_FAILURE = ("exclude", "worst")


REPRODUCIBILITY = ("deterministic", "stochastic", "judge-based")


def worst_value(metric: Any) -> float | None:
    """The metric's worst value: its lower bound if higher is better, its upper bound if lower is
    better; None when the direction or that bound is not declared (no penalised mean possible)."""
    low, high = stats.check_bounds(getattr(metric, "bounds", None))
    direction = getattr(metric, "higher_is_better", None)
    if direction is True:
        return low
    if direction is False:
        return high
    return None


def whole_set_fields(metric_id: str, results: Sequence[MetricResult]) -> dict[str, Any]:
    """The fields every aggregate of a metric scored over the whole set carries (FVD, rank correlation,
    optimisation lift): its id, the item count and why items were not scored."""
    return {"metric_id": metric_id, "n_total": len(results),
            "skip_breakdown": dict(Counter(skip_key(r) for r in results if r.status != "ok"))}


def whole_set_start(metric_id: str, results: Sequence[MetricResult], aggregator: str,
                    per_sample: str) -> tuple[list[MetricResult], dict[str, Any], dict[str, Any]]:
    """A whole-set metric's aggregate begun: its ok rows, :func:`whole_set_fields` and the counting
    diagnostics (status counts, coverage of the ok rows, aggregator, what its per-sample rows hold)."""
    counts = Counter(r.status for r in results)
    rows = [r for r in results if r.status == "ok"]
    diagnostics = {"status_counts": {s: counts.get(s, 0) for s in ("ok", "fail", "skip", "error")},
                   "coverage": len(rows) / len(results) if results else 0.0, "aggregator": aggregator,
                   "per_sample": per_sample}
    return rows, whole_set_fields(metric_id, results), diagnostics


def default_aggregate(
    metric_id: str,
    results: Sequence[MetricResult] | OutcomeColumns,
    *,
    aggregator: str = "mean",
    statistics: Sequence[str] = ("mean",),
    ci: str = "auto",
    confidence: float = 0.95,
    seed: int = 0,
    bounds: Any = None,
) -> AggregateResult:
    """Aggregate ok/fail items; skip and error are excluded from the denominator and counted.

    ``results``: the rows, or their :class:`~wfeval.metrics.outcome_columns.OutcomeColumns` (what a
    streaming run keeps; both give the same aggregate). ``bounds``: the metric's valid range; a
    confidence interval never leaves it (a clip is recorded in the interval's method)."""
    columns = results if isinstance(results, OutcomeColumns) else OutcomeColumns.of(results)
    n_total = len(columns)
    n_scored = int(columns.scored_mask().sum())
    breakdown = Counter(columns.skip_keys())
    summary = stats.summarize(columns.values("norm"), aggregator=aggregator, statistics=statistics, ci=ci,
                              confidence=confidence, seed=seed, bounds=bounds)
    raw_summary = stats.summarize(columns.values("raw"), aggregator=aggregator, statistics=statistics, ci="none")
    diagnostics: dict[str, Any] = {
        "status_counts": columns.status_counts(),
        "coverage": (n_scored / n_total) if n_total else 0.0,
        "aggregator": aggregator,
        "value": summary.value,
    }
    penalised = columns.n_penalised()
    if penalised:
        diagnostics["penalised"] = penalised  # failed generations scored at the metric's worst value
    if not n_scored:
        diagnostics["reason"] = (
            f"no item was scored: all {n_total} skipped or errored" if n_total else "no items"
        )
    return AggregateResult(
        metric_id=metric_id,
        n_total=n_total,
        n_valid=n_scored,
        n_skipped=n_total - n_scored,
        raw_stats=raw_summary.stats,
        normalized_stats=summary.stats,
        confidence_interval=summary.confidence_interval,
        stderr=summary.stderr,
        skip_breakdown=dict(breakdown),
        valid=bool(n_scored),
        diagnostics=diagnostics,
    )


def measurements_of(metric_id: str, metric: Any) -> dict[str, Any]:
    """Measurement id -> the metric object that scores it. A metric serving several measurements
    declares them with ``measurements()`` (``imagined_probe_r2``: one per horizon,
    ``imagined_probe_r2_k1`` …); any other metric is one measurement, under ``metric_id``. Each
    measurement is then scored, aggregated, recorded and cached as a metric of its own."""
    declared = getattr(metric, "measurements", None)
    if not callable(declared):
        return {metric_id: metric}
    out = {str(m): one for m, one in dict(declared()).items()}
    if not out:
        raise ValueError(f"metric {metric_id!r}: its measurements() declares no measurement")
    return out


class BaseMetric:
    """Declared metadata + default aggregation; subclasses implement ``compute_sample``."""

    name: ClassVar[str]
    aliases: ClassVar[tuple[str, ...]] = ()  # other names the registry resolves to this metric
    groups: ClassVar[tuple[str, ...]] = ()  # metric groups it belongs to (a protocol's or task's metric_groups)
    version: ClassVar[str] = "1.0"
    required_artifacts: ClassVar[tuple[str, ...]] = ()
    higher_is_better: ClassVar[bool | None] = None
    aggregator: ClassVar[str] = "mean"
    statistics: ClassVar[tuple[str, ...]] = ("mean", "std", "min", "max")
    ci: ClassVar[str] = "auto"  # auto | none | normal | wilson | bootstrap (see wfeval.stats.summarize)
    family: ClassVar[str] = ""
    description: ClassVar[str] = ""
    output_unit: ClassVar[str] = ""
    reproducibility: ClassVar[str] = "deterministic"
    # constructor parameters that are not config options (no schema field: the default applies)
    internal_parameters: ClassVar[tuple[str, ...]] = ("seed",)
    #: the valid range of a per-sample value (None: open on that side); intervals never leave it
    bounds: ClassVar[tuple[float | None, float | None]] = (None, None)
    #: ``exclude``: a failed generation is left out of the mean (it lowers the coverage);
    #: ``worst``: it is scored at :func:`worst_value` (a penalised mean). ``metric.<id>.on_failure``
    on_failure: ClassVar[str] = "exclude"
    #: the decision-ladder rung (``L0`` … ``L7``, :mod:`wfeval.metrics.ladder`) the measure is evidence
    #: for; None: the built-in table's (``DEFAULT_RUNGS``), or none (timings)
    rung: ClassVar[str | None] = None

    def __init__(self, confidence: float = 0.95, seed: int = 0):
        if not 0.0 < confidence < 1.0:
            raise ValueError(f"{type(self).__name__}: confidence must be in (0, 1), got {confidence}")
        self.confidence = confidence
        self.seed = seed

    @classmethod
    def spec(cls) -> MetricSpec:
        return MetricSpec(
            id=cls.name,
            aliases=cls.aliases,
            description=cls.description,
            version=cls.version,
            family=cls.family,
            required_artifacts=cls.required_artifacts,
            output_unit=cls.output_unit,
            higher_is_better=cls.higher_is_better,
            aggregator=cls.aggregator,
            statistics=cls.statistics,
            implementation=f"{cls.__module__}.{cls.__qualname__}",
            metadata={"reproducibility": cls.reproducibility, "bounds": list(cls.bounds)},
        )

    def aggregate(self, results: Sequence[MetricResult]) -> AggregateResult:
        return default_aggregate(self.name, results, aggregator=self.aggregator, statistics=self.statistics,
                                 ci=self.ci, confidence=self.confidence, seed=self.seed, bounds=self.bounds)


class DescribedMetric(BaseMetric):
    """:class:`BaseMetric` whose :meth:`spec` also carries capability, reference need and variant."""

    display_name: ClassVar[str] = ""
    capability: ClassVar[str] = ""
    requires_reference: ClassVar[bool] = False
    variant: ClassVar[str] = ""
    tags: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def spec(cls) -> MetricSpec:
        base = super().spec()
        return dataclasses.replace(
            base, display_name=cls.display_name, capability=cls.capability,
            requires_reference=cls.requires_reference, tags=cls.tags,
            metadata={**dict(base.metadata or {}), "variant": cls.variant},
        )
