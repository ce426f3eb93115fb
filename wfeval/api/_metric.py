"""Metric contracts: the declarative spec, per-sample and aggregate results, the Metric protocol."""
from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import InitVar, dataclass, field
from typing import Any, Protocol, runtime_checkable

from ._base import ContractError, Record, aliased
from ._generation import ArtifactRef, GenerationRequest, GenerationResult
from ._schema import (
    AGGREGATE_RESULT_SCHEMA_VERSION,
    METRIC_RESULT_SCHEMA_VERSION,
    METRIC_SPEC_SCHEMA_VERSION,
)

ITEM_STATUSES = ("ok", "fail", "skip", "error")


@aliased("id", "metric_id")
@dataclass(frozen=True)
class MetricSpec(Record):
    """Declarative metric description: identity, inputs and aggregation expectations."""

    id: str | None = None
    metric_id: InitVar[str | None] = None
    aliases: tuple[str, ...] = ()
    display_name: str = ""
    description: str = ""
    version: str = "1.0"
    family: str = ""
    capability: str = ""
    requires_reference: bool = False
    required_artifacts: tuple[str, ...] = ()
    output_unit: str = ""
    higher_is_better: bool | None = None
    normalizer: str | None = None
    aggregator: str = "mean"
    statistics: tuple[str, ...] = ("mean",)
    primary: bool = False
    weight: float = 1.0
    implementation: str | None = None
    tags: tuple[str, ...] = ()
    metadata: Mapping[str, Any] | None = None
    schema_version: str = METRIC_SPEC_SCHEMA_VERSION

    _required = ("schema_version",)


@dataclass(frozen=True)
class MetricResult(Record):
    """One metric's output for one sample; ``valid=False`` plus ``skip_reason`` when unscorable."""

    sample_id: str
    metric_id: str
    raw_value: Any = None
    normalized_value: float | None = None
    components: Mapping[str, Any] = field(default_factory=dict)
    valid: bool = True
    coverage: float = 1.0
    skip_reason: str | None = None
    diagnostics: Mapping[str, Any] = field(default_factory=dict)
    artifact_refs: Mapping[str, ArtifactRef] = field(default_factory=dict)
    judge_trace: Mapping[str, Any] = field(default_factory=dict)
    schema_version: str = METRIC_RESULT_SCHEMA_VERSION

    _required = ("sample_id", "metric_id", "schema_version")

    def _check(self) -> None:
        if not 0.0 <= self.coverage <= 1.0:
            raise ContractError(f"MetricResult.coverage: expected a float in [0, 1], got {self.coverage!r}")

    @property
    def status(self) -> str:
        """``diagnostics['status']`` if it is one of ITEM_STATUSES, else 'ok'/'skip' from ``valid``."""
        status = self.diagnostics.get("status")
        if isinstance(status, str) and status in ITEM_STATUSES:
            return status
        return "ok" if self.valid else "skip"


@dataclass(frozen=True)
class AggregateResult(Record):
    """Dataset/split-level summary of many MetricResults: counts, statistics, uncertainty."""

    metric_id: str
    n_total: int = 0
    n_valid: int = 0
    n_skipped: int = 0
    raw_stats: Mapping[str, Any] = field(default_factory=dict)
    normalized_stats: Mapping[str, Any] = field(default_factory=dict)
    confidence_interval: Mapping[str, Any] = field(default_factory=dict)
    stderr: float | None = None
    skip_breakdown: Mapping[str, int] = field(default_factory=dict)
    valid: bool = True
    diagnostics: Mapping[str, Any] = field(default_factory=dict)
    schema_version: str = AGGREGATE_RESULT_SCHEMA_VERSION

    _required = ("metric_id", "schema_version")

    def _check(self) -> None:
        for name in ("n_total", "n_valid", "n_skipped"):
            if getattr(self, name) < 0:
                raise ContractError(f"AggregateResult.{name}: expected a non-negative int, got {getattr(self, name)}")


@runtime_checkable
class Metric(Protocol):
    """Minimal structural surface of a metric: score one sample, aggregate many."""

    name: str
    version: str
    required_artifacts: tuple[str, ...]
    higher_is_better: bool | None

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        """Score one generated sample."""
        ...

    def aggregate(self, results: Sequence[MetricResult]) -> AggregateResult:
        """Summarize per-sample results."""
        ...
