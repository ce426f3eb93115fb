"""What the pipeline needs from a benchmark family (see shared/seeds/004: adapter + runtime hook).

A benchmark adapter turns its dataset into :class:`~wfeval.api.GenerationRequest` objects whose
inputs and references are stored artifacts; it never calls a model or a metric.
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

from wfeval.api import BenchmarkSpec, EvaluationProtocolSpec, GenerationRequest, WorldTaskConfig
from wfeval.artifacts import ArtifactStore


@runtime_checkable
class BenchmarkAdapter(Protocol):
    """A benchmark family's dataset adapter."""

    spec: BenchmarkSpec

    def requests(
        self, *, store: ArtifactStore, task: WorldTaskConfig, protocol: EvaluationProtocolSpec
    ) -> Sequence[GenerationRequest]:
        """The requests of the selected split, in a stable order, with stable sample ids."""
        ...

    def fingerprint(self) -> dict[str, Any]:
        """What identifies the data (content hash, versions); recorded in the manifest."""
        ...
