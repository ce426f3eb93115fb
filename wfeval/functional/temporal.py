"""No-reference temporal metrics over consecutive frames: ``flicker``, ``motion_magnitude``,
``frame_repeat_rate``.

Each takes one video ``T×H×W×C`` or a batch ``B×T×H×W×C`` (numpy or torch, uint8 or float with
an explicit ``data_range``; at least 2 frames) and looks at the ``T-1`` steps between consecutive
frames. The result is one value per video (0-d, or shape ``B``), or with ``per_frame=True`` the
per-step curve (shape ``T-1`` or ``B×(T-1)``); the per-video value is the unweighted mean of
the curve.

Variants:

* ``flicker``: VBench's temporal flickering score (``vbench/temporal_flickering.py``:
  ``(255 - mean_t MAE(frame_t, frame_t+1)) / 255``), generalised to any ``data_range``:
  ``1 - mean|x[t+1] - x[t]| / data_range`` over pixels and channels. In [0, 1]; 1 means no
  change at all (higher = steadier). VBench applies it to static-scene prompts; on moving
  content it also measures motion, so compare models on the same content.
* ``motion_magnitude``: the share of pixels that change, per step: a pixel moves when its
  largest per-channel absolute change exceeds ``threshold·data_range`` (default 0.1, i.e. 25.5
  uint8 levels, above sensor-like noise, below object edges). In [0, 1]; 0 for a frozen video.
* ``frame_repeat_rate``: the share of steps whose frames are near-identical: mean absolute
  difference at most ``threshold·data_range`` (default 1/255: one uint8 level on average,
  which tolerates lossy-codec noise). In [0, 1]; 1 for a frozen video.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from wfeval.functional._video import (
    check_video,
    exact_frame_mean,
    frame_mean,
    int_diff,
    is_int_tensor,
    mean_frames,
    resolve_data_range,
    to_float,
)

__all__ = ["flicker", "motion_magnitude", "frame_repeat_rate"]

MOTION_THRESHOLD = 0.1
REPEAT_THRESHOLD = 1.0 / 255.0


def _abs_steps(video: Any, data_range: float | None, name: str) -> Any:
    """``|x[t+1] - x[t]| / data_range`` for every step: shape ``[B×](T-1)×H×W×C``."""
    check_video(video, "video", min_frames=2)
    scale = resolve_data_range(video, data_range, name)
    x = to_float(video)
    return abs(x[..., 1:, :, :, :] - x[..., :-1, :, :, :]) / scale


def _step_means(video: Any, data_range: float | None, name: str) -> Any:
    """Mean of ``|x[t+1] - x[t]| / data_range`` over each step's pixels and channels: ``[B×](T-1)``.

    Integer tensors are summed exactly in int64 (a float64 result); the rest as :func:`_abs_steps`.
    """
    if is_int_tensor(video):
        check_video(video, "video", min_frames=2)
        scale = resolve_data_range(video, data_range, name)
        return exact_frame_mean(int_diff(video[..., 1:, :, :, :], video[..., :-1, :, :, :]), 1) / scale
    return frame_mean(_abs_steps(video, data_range, name))


def _as_float(mask: Any) -> Any:
    return mask.astype(np.float64) if isinstance(mask, np.ndarray) else mask.float()


def _finish(curve: Any, per_frame: bool) -> Any:
    return curve if per_frame else mean_frames(curve)


def flicker(video: Any, *, data_range: float | None = None, per_frame: bool = False) -> Any:
    """VBench temporal flickering: ``1 - mean |x[t+1] - x[t]| / data_range`` in [0, 1]."""
    return _finish(1.0 - _step_means(video, data_range, "flicker"), per_frame)


def motion_magnitude(video: Any, *, data_range: float | None = None, threshold: float = MOTION_THRESHOLD,
                     per_frame: bool = False) -> Any:
    """Share of pixels whose largest channel change exceeds ``threshold·data_range``, per step."""
    if not 0.0 <= threshold < 1.0:
        raise ValueError(f"motion_magnitude: threshold must be in [0, 1), got {threshold}")
    if is_int_tensor(video):  # the largest channel change, exact, then scaled in float64
        check_video(video, "video", min_frames=2)
        scale = resolve_data_range(video, data_range, "motion_magnitude")
        peak = int_diff(video[..., 1:, :, :, :], video[..., :-1, :, :, :]).abs_().amax(dim=-1).double() / scale
    else:
        steps = _abs_steps(video, data_range, "motion_magnitude")
        peak = steps.max(axis=-1) if isinstance(steps, np.ndarray) else steps.amax(dim=-1)
    moved = _as_float(peak > threshold)
    curve = moved.mean(axis=(-2, -1)) if isinstance(moved, np.ndarray) else moved.mean(dim=(-2, -1))
    return _finish(curve, per_frame)


def frame_repeat_rate(video: Any, *, data_range: float | None = None, threshold: float = REPEAT_THRESHOLD,
                      per_frame: bool = False) -> Any:
    """Share of steps with mean ``|x[t+1] - x[t]|`` at most ``threshold·data_range`` (1 = repeat)."""
    if not 0.0 <= threshold < 1.0:
        raise ValueError(f"frame_repeat_rate: threshold must be in [0, 1), got {threshold}")
    change = _step_means(video, data_range, "frame_repeat_rate")
    return _finish(_as_float(change <= threshold), per_frame)
