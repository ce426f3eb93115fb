"""Fréchet Video Distance — placeholder until the I3D port lands (issue #5).

It resolves as ``metric=fvd`` and records the recipe it will use, but reports an honest skip
for every sample and never a number.
"""

from __future__ import annotations

from wfeval.api import GenerationRequest, GenerationResult, MetricResult
from wfeval.metrics.base import BaseMetric
from wfeval.metrics.outcomes import skipped

NOT_AVAILABLE = (
    "FVD is not available in this wfeval version: the I3D feature network is not implemented "
    "yet, so no FVD number is reported"
)


class FVD(BaseMetric):
    name = "fvd"
    version = "0.0"
    required_artifacts = ("generated_video",)
    higher_is_better = False
    family = "distribution"
    output_unit = "fvd"
    description = "Fréchet distance between I3D (Kinetics-400) features of real and generated videos."
    reproducibility = "deterministic"

    def __init__(self, clip_length: int = 16, resize: int = 224, resize_mode: str = "bilinear",
                 covariance: str = "N", confidence: float = 0.95, seed: int = 0):
        super().__init__(confidence, seed)
        if covariance not in ("N", "N-1"):
            raise ValueError(f"metric.fvd.covariance must be 'N' or 'N-1', got {covariance!r}")
        self.recipe = {"clip_length": clip_length, "resize": resize, "resize_mode": resize_mode,
                       "covariance": covariance, "input_range": "[-1, 1]"}

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        return skipped(request.sample_id, self.name, NOT_AVAILABLE, recipe=self.recipe)
