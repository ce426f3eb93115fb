"""Test-only plugins loaded through `_target_`, the way users add their own pieces."""

from __future__ import annotations

import time

from wfeval.api import MetricResult
from wfeval.benchmarks.gridworld.baselines import OracleModel
from wfeval.metrics.base import BaseMetric
from wfeval.metrics.outcomes import scored


class SlowOracle(OracleModel):
    """The oracle, ``delay_s`` slower per sample (to interrupt a run halfway)."""

    def __init__(self, name: str = "slow_oracle", delay_s: float = 0.2):
        super().__init__(name)
        self.delay_s = delay_s

    def generate_one(self, request):
        time.sleep(self.delay_s)
        return super().generate_one(request)


class FlakyOracle(OracleModel):
    """The oracle, raising on the samples whose index is listed in ``fail_on``."""

    def __init__(self, name: str = "flaky_oracle", fail_on=(3,)):
        super().__init__(name)
        self.fail_on = {int(i) for i in fail_on}

    def generate_one(self, request):
        if int(request.sample_id.rsplit("-", 1)[1]) in self.fail_on:
            raise RuntimeError(f"simulated model crash on {request.sample_id}")
        return super().generate_one(request)


class FrameCount(BaseMetric):
    """Frames in the generated video; raises on the samples listed in ``raise_on``."""

    name = "frame_count"
    required_artifacts = ("generated_video",)

    def __init__(self, raise_on=(), confidence: float = 0.95):
        super().__init__(confidence)
        self.raise_on = {int(i) for i in raise_on}

    def compute_sample(self, request, result) -> MetricResult:
        if int(request.sample_id.rsplit("-", 1)[1]) in self.raise_on:
            raise ZeroDivisionError("simulated metric bug")
        return scored(request.sample_id, self.name, result.artifacts["generated_video"].shape[0])
