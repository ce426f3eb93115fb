"""Metrics that prove the path: did the model produce its outputs, and how many artifacts."""

from __future__ import annotations

from typing import Sequence

from wfeval.api import GenerationRequest, GenerationResult, MetricResult
from wfeval.metrics.base import BaseMetric
from wfeval.metrics.outcomes import scored


class GeneratedRate(BaseMetric):
    """1 when the model produced every required output of the task for a sample, else 0.

    The required outputs are the task's, or those the protocol required of this model and recorded in
    the result (``metadata["required_outputs"]``). A sample the model failed on is a scored ``fail`` (it counts in the denominator), never a
    skip: a model that fails half its samples has a generated rate of 0.5 (Wilson CI).
    """

    name = "generated_rate"
    version = "1.0"
    higher_is_better = True
    aggregator = "ratio"
    statistics = ("ratio",)
    bounds = (0.0, 1.0)
    family = "coverage"
    output_unit = "fraction"
    description = "Share of samples for which the model produced every required output."

    def __init__(self, confidence: float = 0.95, seed: int = 0, output_keys: Sequence[str] = ("generated_video",)):
        super().__init__(confidence, seed)
        self.output_keys = tuple(output_keys)

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        # a protocol that serves a model other outputs than the task's (a latent model planning without
        # a decoder: its predicted latents) says so in the result; the pipeline's contract required them
        keys = result.metadata.get("required_outputs") or self.output_keys
        missing = [k for k in keys if k not in result.artifacts]
        ok = result.status == "ok" and not missing
        diagnostics = {"generation_status": result.status}
        if missing:
            diagnostics["missing_outputs"] = missing
        if result.error:
            diagnostics["generation_error"] = result.error
        return scored(request.sample_id, self.name, 1 if ok else 0, passed=ok, diagnostics=diagnostics)


class ArtifactCount(BaseMetric):
    """Number of artifacts the model returned for a sample (the seed's example metric)."""

    name = "artifact_count"
    version = "1.0"
    higher_is_better = None
    aggregator = "mean"
    statistics = ("mean", "min", "max")
    bounds = (0.0, None)
    family = "coverage"
    output_unit = "artifacts"
    description = "Number of artifacts returned per sample."

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        return scored(request.sample_id, self.name, len(result.artifacts))
