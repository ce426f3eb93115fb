"""No-reference temporal metrics of the generated video: flicker, motion_magnitude, frame_repeat_rate.

Computed by :mod:`wfeval.functional.temporal` over the ``T-1`` steps between consecutive frames
of ``generated_video`` (no reference needed); the per-step curve lands in
``components["per_step"]`` (step ``t`` is frame ``t`` → ``t+1``). A video of one frame is a
``skip`` with the reason.
"""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

import wfeval.functional.temporal as F
from wfeval.api import GenerationRequest, GenerationResult, MetricResult
from wfeval.metrics.base import DescribedMetric
from wfeval.metrics.device import DeviceMixin
from wfeval.metrics.outcomes import scored, skipped
from wfeval.storage.artifacts import read_array


class _TemporalMetric(DeviceMixin, DescribedMetric):
    required_artifacts = ("generated_video",)
    bounds = (0.0, 1.0)  # each is a fraction or a score in [0, 1]
    family = "temporal"
    capability = "core_video"
    function: Callable[..., Any]

    def __init__(self, data_range: float = 255.0, confidence: float = 0.95, seed: int = 0,
                 device: str | None = None):
        super().__init__(confidence, seed)
        self._set_device(device)
        if not data_range > 0:
            raise ValueError(f"metric.{self.name}.data_range must be > 0, got {data_range}")
        self.data_range = float(data_range)

    def options(self) -> dict[str, Any]:
        return {}

    def _fraction(self, threshold: float) -> float:
        if not 0.0 <= threshold < 1.0:
            raise ValueError(f"metric.{self.name}.threshold must be in [0, 1) (a fraction of data_range), "
                             f"got {threshold}")
        return float(threshold)

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        video = read_array(result.artifacts["generated_video"])
        if video.ndim != 4 or video.shape[0] < 2:
            return skipped(request.sample_id, self.name,
                           f"needs a video of at least 2 frames (T×H×W×C), got shape {video.shape}")
        with self.one_cpu_thread():
            curve = self.to_numpy(type(self).function(self.as_input(video), data_range=self.data_range,
                                                      per_frame=True, **self.options()))
        options = ", ".join(f"{k}={v:g}" for k, v in {**self.options(), "data_range": self.data_range}.items())
        return scored(request.sample_id, self.name, float(np.mean(curve)),
                      components={"per_step": [float(v) for v in curve], **self.options()},
                      diagnostics={"variant": f"{self.name}({options})"})


class Flicker(_TemporalMetric):
    """VBench temporal flickering, ``1 - mean|x[t+1] - x[t]| / data_range``, in [0, 1]; 1 = no change."""

    name = "flicker"
    groups = ("temporal",)
    aliases = ("temporal_flickering",)
    higher_is_better = True
    output_unit = "score [0, 1]"
    display_name = "Temporal flickering (VBench)"
    description = "1 minus the mean absolute change between consecutive frames (VBench temporal flickering)."
    variant = "vbench temporal_flickering: (255 - mean MAE of consecutive frames) / 255"
    function = staticmethod(F.flicker)


class MotionMagnitude(_TemporalMetric):
    """Share of pixels whose largest channel change between consecutive frames exceeds
    ``threshold·data_range`` (default 0.1), averaged over steps; 0 for a frozen video."""

    name = "motion_magnitude"
    groups = ("temporal",)
    aliases = ("moving_pixel_fraction",)
    higher_is_better = None
    output_unit = "fraction of pixels"
    display_name = "Motion magnitude"
    description = "Share of pixels that change between consecutive frames."
    variant = "changed-pixel fraction (max channel |diff| > 0.1 data_range)"
    function = staticmethod(F.motion_magnitude)

    def __init__(self, data_range: float = 255.0, threshold: float = F.MOTION_THRESHOLD,
                 confidence: float = 0.95, seed: int = 0, device: str | None = None):
        super().__init__(data_range, confidence, seed, device)
        self.threshold = self._fraction(threshold)

    def options(self) -> dict[str, Any]:
        return {"threshold": self.threshold}


class FrameRepeatRate(_TemporalMetric):
    """Share of steps whose frames are near-identical (mean |diff| ≤ ``threshold·data_range``,
    default 1/255: one uint8 level); 1 for a frozen video."""

    name = "frame_repeat_rate"
    groups = ("temporal",)
    aliases = ("frame_repeat",)
    higher_is_better = False
    output_unit = "fraction of steps"
    display_name = "Frame repeat rate"
    description = "Share of consecutive frame pairs that are near-identical."
    variant = "mean |diff| <= 1/255 data_range"
    function = staticmethod(F.frame_repeat_rate)

    def __init__(self, data_range: float = 255.0, threshold: float = F.REPEAT_THRESHOLD,
                 confidence: float = 0.95, seed: int = 0, device: str | None = None):
        super().__init__(data_range, confidence, seed, device)
        self.threshold = self._fraction(threshold)

    def options(self) -> dict[str, Any]:
        return {"threshold": self.threshold}
