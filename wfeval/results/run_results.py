"""``results.json`` as data: :class:`RunResults` and its rows (aggregates, what each measurement
is, the scorecard, the evidence verdict). Read and written by :mod:`wfeval.results.record`."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from wfeval.results.blocks import BenchmarkInfo, Block, ModelInfo, ProtocolInfo
from wfeval.storage.rundir import RUN_FORMAT_VERSION


@dataclass
class Aggregate(Block):
    """One measurement's aggregate (``results`` and ``slices`` rows: ``AggregateResult.to_dict()``)."""

    metric_id: str | None = None
    n_total: int = 0
    n_valid: int = 0
    n_skipped: int = 0
    raw_stats: dict[str, Any] | None = None
    normalized_stats: dict[str, Any] | None = None
    confidence_interval: dict[str, Any] | None = None
    stderr: float | None = None
    skip_breakdown: dict[str, int] | None = None
    valid: bool = False
    diagnostics: dict[str, Any] | None = None
    schema_version: str | None = None

    @property
    def value(self) -> float | None:
        """The headline number (None when the aggregate is invalid): the aggregator's value, else
        the mean of the normalized values (:func:`wfeval.results.aggregation.headline`)."""
        if not self.valid:
            return None
        value = (self.diagnostics or {}).get("value")
        return value if value is not None else (self.normalized_stats or {}).get("mean")

    @property
    def ci_low(self) -> float | None:
        return (self.confidence_interval or {}).get("low")

    @property
    def ci_high(self) -> float | None:
        return (self.confidence_interval or {}).get("high")

    @property
    def ci_method(self) -> str | None:
        return (self.confidence_interval or {}).get("method")

    @property
    def coverage(self) -> float | None:
        """n_valid / n_total (None for an empty aggregate): the share of samples the value rests on."""
        return self.n_valid / self.n_total if self.n_total else None

    @property
    def reason(self) -> str | None:
        """Why an invalid aggregate has no value (``diagnostics.reason``)."""
        return (self.diagnostics or {}).get("reason")


@dataclass
class MeasurementInfo(Block):
    """What a reader needs to show one measurement: version, direction, unit, bounds, family and
    the decision-ladder rung it is evidence for (``L0`` … ``L7``; None in a run written before the
    ladder, or for a measure that is evidence for no rung)."""

    version: Any = None
    higher_is_better: bool | None = None
    selected_by: str | None = None
    unit: str | None = None
    bounds: list[float | None] | None = None
    family: str | None = None
    rung: str | None = None


@dataclass
class ScorecardComponent(Block):
    value: float | None = None
    normalized: float | None = None
    weight: float | None = None
    missing: bool | None = None
    normalizer: str | None = None
    higher_is_better: bool | None = None


@dataclass
class Scorecard(Block):
    """The overall score from the benchmark's declared components (None when one is missing)."""

    _mapped = {"components": ScorecardComponent}

    primary: str | None = None
    score: float | None = None
    partial_score: float | None = None
    missing: list[str] = field(default_factory=list)
    components: dict[str, ScorecardComponent] = field(default_factory=dict)


@dataclass
class Evidence(Block):
    """The evidence gate's verdict: eligible, the reasons it is not, the rules it applied."""

    eligible: bool | None = None
    reasons: list[str] = field(default_factory=list)
    rules: dict[str, Any] = field(default_factory=dict)
    missing_metrics: list[str] | None = None


@dataclass
class RunResults(Block):
    """``results.json``: the aggregates of a run keyed ``<benchmark_id>.<metric_id>``, their
    slices, the scorecard and the evidence verdict."""

    _nested = {"benchmark": BenchmarkInfo, "model": ModelInfo, "protocol": ProtocolInfo,
               "scorecard": Scorecard, "evidence": Evidence}
    _mapped = {"metrics": MeasurementInfo, "results": Aggregate}
    _mapped2 = {"slices": Aggregate}

    schema_version: str = RUN_FORMAT_VERSION
    run_id: str = ""
    config_hash: str | None = None
    benchmark: BenchmarkInfo = field(default_factory=BenchmarkInfo)
    model: ModelInfo = field(default_factory=ModelInfo)
    protocol: ProtocolInfo = field(default_factory=ProtocolInfo)
    metrics: dict[str, MeasurementInfo] = field(default_factory=dict)
    metric_selection: dict[str, str] = field(default_factory=dict)
    results: dict[str, Aggregate] = field(default_factory=dict)
    slices: dict[str, dict[str, Aggregate]] = field(default_factory=dict)
    scorecard: Scorecard = field(default_factory=Scorecard)
    evidence: Evidence = field(default_factory=Evidence)

    def info(self, measurement: str) -> MeasurementInfo:
        """What the run records about ``measurement`` (an empty block for one it does not)."""
        return self.metrics.get(measurement) or MeasurementInfo()

    @property
    def model_name(self) -> str:
        return str(self.model.name or "?")

    @property
    def benchmark_id(self) -> str:
        return str(self.benchmark.id or "")
