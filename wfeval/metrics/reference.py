"""Full-reference metrics over the generated and the reference video: psnr, ssim, mse, mae.

Each compares ``generated_video`` with ``request.references["video"]`` frame by frame (from
frame ``skip_frames`` on: the gridworld suite skips the conditioning frame the model was
given), through :mod:`wfeval.functional.reference`. The per-frame curve lands in
``components["per_frame"]`` (frame indices from ``components["first_frame"]``) so a report can
plot quality against time. A sample without a reference video, or whose generated video has
another shape than the reference, is a ``skip`` with the reason.
"""

from __future__ import annotations

from typing import Any

import numpy as np

import wfeval.functional.reference as F
from wfeval.api import GenerationRequest, GenerationResult, MetricResult
from wfeval.metrics.base import DescribedMetric
from wfeval.metrics.device import DeviceMixin
from wfeval.metrics.outcomes import scored, skipped
from wfeval.storage.artifacts import read_array


class _ReferenceMetric(DeviceMixin, DescribedMetric):
    required_artifacts = ("generated_video",)
    requires_reference = True
    family = "reference"
    capability = "core_video"
    reference_key = "video"
    context_frames = 0  # frames before the first compared one that the score also reads

    def __init__(self, data_range: float = 255.0, skip_frames: int = 0, confidence: float = 0.95, seed: int = 0,
                 device: str | None = None):
        super().__init__(confidence, seed)
        self._set_device(device)
        if skip_frames < 0:
            raise ValueError(f"metric.{self.name}.skip_frames must be >= 0, got {skip_frames}")
        if not data_range > 0:
            raise ValueError(f"metric.{self.name}.data_range must be > 0, got {data_range}")
        self.data_range = float(data_range)
        self.skip_frames = int(skip_frames)
        self.bounds = self.value_bounds()

    def value_bounds(self) -> tuple[float | None, float | None]:
        """The valid range of a per-sample value for this configuration."""
        return type(self).bounds

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        ref = request.references.get(self.reference_key)
        if ref is None:
            return skipped(request.sample_id, self.name, f"no reference video (references['{self.reference_key}'])")
        preds, target = read_array(result.artifacts["generated_video"]), read_array(ref)
        if preds.shape != target.shape:
            return skipped(request.sample_id, self.name,
                           f"generated video shape {preds.shape} differs from the reference {target.shape}")
        first = max(self.skip_frames - self.context_frames, 0)
        preds, target = preds[first:], target[first:]
        if len(preds) <= self.context_frames:
            return skipped(request.sample_id, self.name, f"no frame left after skip_frames={self.skip_frames}")
        if self.on_host(preds, target):
            value, curve, extra = self.score(preds, target)
        else:
            with self.one_cpu_thread():
                value, curve, extra = self.score(self.as_input(preds), self.as_input(target))
        components = {"per_frame": [float(v) for v in curve], "first_frame": first + self.context_frames,
                      **extra}
        return scored(request.sample_id, self.name, float(value), components=components,
                      diagnostics={"variant": self.describe()})

    def describe(self) -> str:
        return self.variant

    def score(self, preds: np.ndarray, target: np.ndarray) -> tuple[float, np.ndarray, dict[str, Any]]:
        """(value, per-frame curve, extra components) for frames that are compared."""
        raise NotImplementedError


class PSNR(_ReferenceMetric):
    """PSNR in dB; per-frame values are capped at ``max_db`` so identical frames stay finite.

    ``average="frames"``: mean of the capped per-frame PSNRs; ``"mse"``: PSNR of the MSE
    averaged over frames (capped). ``components["frames_capped"]`` counts the capped frames.
    """

    name = "psnr"
    exact_for_uint8 = True  # integer sums: the same value with numpy as on any torch device
    groups = ("reference",)
    aliases = ("peak_signal_noise_ratio",)
    version = "1.0"
    higher_is_better = True
    output_unit = "dB"
    display_name = "PSNR"
    description = "Peak signal-to-noise ratio against the reference video, per frame then averaged."
    variant = "psnr(average=frames, max_db=100)"
    bounds = (0.0, 100.0)  # [0, max_db]: PSNR of in-range values is >= 0, capped at max_db

    def __init__(self, data_range: float = 255.0, skip_frames: int = 0, average: str = "frames",
                 max_db: float = 100.0, confidence: float = 0.95, seed: int = 0, device: str | None = None):
        super().__init__(data_range, skip_frames, confidence, seed, device)
        if average not in F.AVERAGES:
            raise ValueError(f"metric.psnr.average must be one of {F.AVERAGES}, got {average!r}")
        if not 0 < max_db < float("inf"):
            raise ValueError(f"metric.psnr.max_db must be a finite number > 0, got {max_db}")
        self.average, self.max_db = average, float(max_db)
        self.bounds = (0.0, self.max_db)

    def describe(self) -> str:
        return f"psnr(average={self.average}, max_db={self.max_db:g}, data_range={self.data_range:g})"

    def score(self, preds, target):
        # the per-frame MSE on the device (exact int64 sums for uint8), the dB in float64 here
        errors = self.to_numpy(F.mse(preds, target, per_frame=True))
        curve = F._db(errors, self.data_range, None)
        capped = np.minimum(curve, self.max_db)
        if self.average == "frames":
            value = capped.mean()
        else:
            value = F._db(errors.mean(), self.data_range, self.max_db)
        extra = {"frames_capped": int((curve > self.max_db).sum()), "max_db": self.max_db, "average": self.average}
        return value, capped, extra


class SSIM(_ReferenceMetric):
    """SSIM (Gaussian 11×11, σ=1.5, K1=0.01, K2=0.03, population covariance, valid region,
    channel mean; equal to scikit-image's with those options), per frame then averaged."""

    name = "ssim"
    groups = ("reference",)
    aliases = ("structural_similarity",)
    version = "1.0"
    higher_is_better = True
    output_unit = "index [-1, 1]"
    display_name = "SSIM"
    description = "Structural similarity against the reference video, per frame then averaged."
    variant = "ssim(gaussian 11x11 sigma=1.5, K1=0.01, K2=0.03, population cov, valid, channel mean)"
    bounds = (-1.0, 1.0)

    def score(self, preds, target):
        curve = self.to_numpy(F.ssim(preds, target, data_range=self.data_range, per_frame=True))
        return curve.mean(), curve, {}


class MSE(_ReferenceMetric):
    """Mean squared error per frame in uint8 levels² (for uint8 videos), averaged over frames."""

    name = "mse"
    exact_for_uint8 = True  # integer sums: the same value with numpy as on any torch device
    groups = ("reference",)
    aliases = ("mean_squared_error",)
    higher_is_better = False
    output_unit = "levels^2"
    display_name = "MSE"
    description = "Mean squared pixel error against the reference video."
    variant = "mse(per frame, mean over frames)"
    bounds = (0.0, 255.0 ** 2)

    def value_bounds(self):
        return (0.0, self.data_range ** 2)

    def score(self, preds, target):
        curve = self.to_numpy(F.mse(preds, target, per_frame=True))
        return curve.mean(), curve, {}


class MAE(_ReferenceMetric):
    """Mean absolute error per frame in uint8 levels (for uint8 videos), averaged over frames."""

    name = "mae"
    exact_for_uint8 = True  # integer sums: the same value with numpy as on any torch device
    groups = ("reference",)
    aliases = ("mean_absolute_error",)
    higher_is_better = False
    output_unit = "levels"
    display_name = "MAE"
    description = "Mean absolute pixel error against the reference video."
    variant = "mae(per frame, mean over frames)"
    bounds = (0.0, 255.0)

    def value_bounds(self):
        return (0.0, self.data_range)

    def score(self, preds, target):
        curve = self.to_numpy(F.mae(preds, target, per_frame=True))
        return curve.mean(), curve, {}


class MotionError(_ReferenceMetric):
    """Mean absolute difference between the generated and the reference frame-to-frame changes
    (uint8 levels for uint8 videos), per transition into each compared frame, averaged."""

    name = "motion_error"
    aliases = ("dynamics_error",)
    higher_is_better = False
    output_unit = "levels"
    display_name = "Motion error"
    description = "Mean absolute error of the frame-to-frame changes against the reference video."
    variant = "mean |Δgenerated − Δreference| per transition t-1→t into each compared frame"
    context_frames = 1  # the change into the first compared frame starts at the frame before it
    bounds = (0.0, 2 * 255.0)  # each change is within ±data_range

    def value_bounds(self):
        return (0.0, 2 * self.data_range)

    def score(self, preds, target):
        curve = self.to_numpy(F.motion_error(preds, target, per_frame=True))
        return curve.mean(), curve, {}

