"""Generation contracts: artifact references, the per-sample request and the model's result."""
from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ._base import ContractError, Record
from ._schema import (
    ARTIFACT_REF_SCHEMA_VERSION,
    GENERATION_REQUEST_SCHEMA_VERSION,
    GENERATION_RESULT_SCHEMA_VERSION,
)

GENERATION_STATUSES = ("ok", "failed", "not_generated")
#: ``request.generation["samples"]``: how many draws of the prediction a request asks for (absent: 1)
SAMPLES_KEY = "samples"
#: ``request.generation["draw"]``: which draw a request is (absent: 0, the single-sample request itself)
DRAW_KEY = "draw"
_SHA256 = re.compile(r"[0-9a-f]{64}")


@dataclass(frozen=True)
class ArtifactRef(Record):
    """Pointer to a stored artifact (video, image, actions, ...) plus integrity/shape hints."""

    kind: str
    uri: str
    sha256: str = ""
    media_type: str = ""
    shape: tuple[int, ...] = ()
    dtype: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    schema_version: str = ARTIFACT_REF_SCHEMA_VERSION

    _required = ("kind", "uri", "schema_version")

    def _check(self) -> None:
        if self.sha256 and not _SHA256.fullmatch(self.sha256):
            raise ContractError(
                f"ArtifactRef.sha256: expected '' or 64 lowercase hex chars, got {self.sha256!r}"
            )
        for i, dim in enumerate(self.shape):
            if dim < 0:
                raise ContractError(f"ArtifactRef.shape[{i}]: expected a non-negative int, got {dim}")


@dataclass(frozen=True)
class GenerationRequest(Record):
    """What a model must generate for one sample: inputs, controls and references."""

    sample_id: str
    task_id: str = ""
    benchmark_id: str = ""
    split: str = "default"
    protocol: str = "open_loop"
    inputs: Mapping[str, ArtifactRef] = field(default_factory=dict)
    controls: Mapping[str, Any] = field(default_factory=dict)
    references: Mapping[str, ArtifactRef] = field(default_factory=dict)
    generation: Mapping[str, Any] = field(default_factory=dict)
    prompt: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)
    schema_version: str = GENERATION_REQUEST_SCHEMA_VERSION

    _required = ("sample_id", "schema_version")


@dataclass(frozen=True)
class GenerationResult(Record):
    """What a model produced for one sample: artifacts, status and run statistics."""

    sample_id: str
    artifacts: Mapping[str, ArtifactRef] = field(default_factory=dict)
    status: str = "ok"
    error: str | None = None
    latency_seconds: float | None = None
    steps: int = 0
    stop_reason: str = ""
    cost: float | None = None
    model_id: str = ""
    metadata: Mapping[str, Any] = field(default_factory=dict)
    schema_version: str = GENERATION_RESULT_SCHEMA_VERSION

    _required = ("sample_id", "schema_version")

    def _check(self) -> None:
        if self.status not in GENERATION_STATUSES:
            raise ContractError(
                f"GenerationResult.status: expected one of {GENERATION_STATUSES}, got {self.status!r}"
            )
        for name in ("latency_seconds", "cost", "steps"):
            value = getattr(self, name)
            if value is not None and not value >= 0:
                raise ContractError(f"GenerationResult.{name}: expected a non-negative number, got {value!r}")


def requested_samples(request: GenerationRequest) -> int:
    """How many samples (draws) ``request`` asks for: ``generation["samples"]``, 1 when absent.

    A request without the option is a single-sample request, exactly as before the option existed
    (its identity is unchanged). A stochastic model answers draw ``i`` of a request with its own
    seed (``generation["draw"] = i``, ``generation["seed"]`` derived from the request's seed); a
    deterministic one answers once and says so (docs/uncertainty.md)."""
    value = request.generation.get(SAMPLES_KEY, 1)
    if isinstance(value, bool) or not isinstance(value, int) or value < 1:
        raise ContractError(f"GenerationRequest.generation[{SAMPLES_KEY!r}]: expected an integer >= 1, got {value!r}")
    return value


def draw_of(request: GenerationRequest) -> int:
    """Which draw of a multi-sample request ``request`` is (``generation["draw"]``; 0 when absent)."""
    value = request.generation.get(DRAW_KEY, 0)
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ContractError(f"GenerationRequest.generation[{DRAW_KEY!r}]: expected an integer >= 0, got {value!r}")
    return value
