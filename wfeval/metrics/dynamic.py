"""The honest lower rungs (L1): ``dynamic_psnr`` and ``dynamic_ssim`` on the pixels that move in the
reference, and ``break_even_horizon``: how many steps a prediction beats holding the first frame.

A static background inflates PSNR and SSIM (holding the first frame already matches it). The
dynamic mask is the reference clip's pixels whose value spans more than ``tolerance`` levels over
the whole clip, conditioning frames included (:func:`wfeval.functional.dynamic.dynamic_mask`); the
frames compared are those ``psnr`` compares (from ``skip_frames`` on). A clip in which nothing moves
is a ``skip`` (no dynamic pixel). The held frame of ``break_even_horizon`` is the last frame the model
was given (``skip_frames − 1``; the first frame when ``skip_frames`` is 0, compared from frame 1 on),
the one ``model=static`` repeats: ``static`` scores 0, a model exact on every frame the clip's length.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import wfeval.functional.dynamic as F
from wfeval.api import GenerationRequest, GenerationResult, MetricResult
from wfeval.metrics.base import DescribedMetric
from wfeval.metrics.outcomes import scored, skipped
from wfeval.storage.artifacts import read_array


class _DynamicMetric(DescribedMetric):
    required_artifacts = ("generated_video",)
    requires_reference = True
    family = "reference"
    capability = "core_video"
    groups = ("reference",)
    version = "1.0"
    rung = "L1"

    def __init__(self, data_range: float = 255.0, skip_frames: int = 0, tolerance: float = 10.0,
                 confidence: float = 0.95, seed: int = 0):
        super().__init__(confidence, seed)
        if skip_frames < 0:
            raise ValueError(f"metric.{self.name}.skip_frames must be >= 0, got {skip_frames}")
        if not data_range > 0 or tolerance < 0:
            raise ValueError(f"metric.{self.name}: data_range must be > 0 and tolerance >= 0, got {data_range}, "
                             f"{tolerance}")
        self.data_range, self.skip_frames, self.tolerance = float(data_range), int(skip_frames), float(tolerance)

    def _videos(self, request: GenerationRequest, result: GenerationResult) -> tuple[Any, Any] | str:
        ref = request.references.get("video")
        if ref is None:
            return "no reference video (references['video'])"
        preds, target = read_array(result.artifacts["generated_video"]), read_array(ref)
        if preds.shape != target.shape:
            return f"generated video shape {preds.shape} differs from the reference {target.shape}"
        if len(target) <= max(self.skip_frames, 1):
            return f"no frame left after skip_frames={self.skip_frames}"
        return preds, target

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        videos = self._videos(request, result)
        if isinstance(videos, str):
            return skipped(request.sample_id, self.name, videos)
        return self.score(request.sample_id, *videos)

    def score(self, sample_id: str, preds: np.ndarray, target: np.ndarray) -> MetricResult:
        raise NotImplementedError


class _MaskedMetric(_DynamicMetric):
    def score(self, sample_id: str, preds: np.ndarray, target: np.ndarray) -> MetricResult:
        mask = F.dynamic_mask(target, self.tolerance)
        if not mask.any():
            return skipped(sample_id, self.name, f"no dynamic pixel: nothing in the reference changes by more than "
                                                 f"{self.tolerance:g} levels")
        first = self.skip_frames
        curve = self.curve(preds[first:], target[first:], mask)
        if np.isnan(curve).all():
            return skipped(sample_id, self.name, "no dynamic pixel inside the SSIM window's valid region")
        return scored(sample_id, self.name, float(curve.mean()), components={
            "per_frame": [float(v) for v in curve], "first_frame": first, "dynamic_fraction": float(mask.mean())},
            diagnostics={"variant": self.describe()})

    def curve(self, preds: np.ndarray, target: np.ndarray, mask: np.ndarray) -> np.ndarray:
        raise NotImplementedError

    def describe(self) -> str:
        return f"{self.name}(tolerance={self.tolerance:g}, data_range={self.data_range:g})"


class DynamicPSNR(_MaskedMetric):
    """PSNR (dB, capped at ``max_db``) over the pixels that move in the reference, per frame then averaged."""

    name = "dynamic_psnr"
    aliases = ("moving_pixel_psnr",)
    higher_is_better = True
    output_unit = "dB"
    display_name = "PSNR (dynamic pixels)"
    description = "PSNR on the pixels that change over the reference clip, per frame then averaged."
    bounds = (0.0, 100.0)

    def __init__(self, data_range: float = 255.0, skip_frames: int = 0, tolerance: float = 10.0,
                 max_db: float = 100.0, confidence: float = 0.95, seed: int = 0):
        super().__init__(data_range, skip_frames, tolerance, confidence, seed)
        if not 0 < max_db < float("inf"):
            raise ValueError(f"metric.dynamic_psnr.max_db must be a finite number > 0, got {max_db}")
        self.max_db = float(max_db)
        self.bounds = (0.0, self.max_db)

    def curve(self, preds, target, mask):
        return F.dynamic_psnr(preds, target, mask, data_range=self.data_range, max_db=self.max_db)


class DynamicSSIM(_MaskedMetric):
    """SSIM (as ``ssim``) averaged over the pixels that move in the reference, per frame then averaged."""

    name = "dynamic_ssim"
    aliases = ("moving_pixel_ssim",)
    higher_is_better = True
    output_unit = "index [-1, 1]"
    display_name = "SSIM (dynamic pixels)"
    description = "SSIM map averaged on the pixels that change over the reference clip, per frame then averaged."
    bounds = (-1.0, 1.0)

    def curve(self, preds, target, mask):
        return F.dynamic_ssim(preds, target, mask, data_range=self.data_range)


class BreakEvenHorizon(_DynamicMetric):
    """The steps over which the prediction beats holding the first frame (``model=static``)."""

    name = "break_even_horizon"
    aliases = ("static_break_even",)
    higher_is_better = True
    output_unit = "steps"
    display_name = "Break-even horizon vs static"
    description = ("Leading predicted frames on which the model's MSE is below holding the last given frame; "
                   "censored at the clip's length.")
    bounds = (0.0, None)

    def score(self, sample_id: str, preds: np.ndarray, target: np.ndarray) -> MetricResult:
        first = max(self.skip_frames, 1)
        steps, censored = F.break_even_horizon(preds[first:], target[first:], target[first - 1])
        return scored(sample_id, self.name, float(steps), components={
            "first_frame": first, "compared": len(target) - first, "censored": censored},
            diagnostics={"variant": f"break_even_horizon(held=frame {first - 1}, mse)"})
