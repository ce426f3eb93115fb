"""Input handling shared by the functional metrics: numpy or torch, uint8 or float, 4-D or 5-D.

Conventions (every public function of :mod:`wfeval.functional` follows them):

* a video is ``T×H×W×C`` (channels last, any ``C ≥ 1``); a batch of videos is ``B×T×H×W×C``;
* ``uint8`` videos hold values in ``[0, 255]`` and default to ``data_range=255``; float videos
  must name their ``data_range`` (``1.0`` for ``[0, 1]``, ``255.0`` for ``[0, 255]``), because
  guessing it from the data silently changes PSNR/SSIM;
* numpy inputs are computed in float64 with numpy/scipy (torch is never imported); torch inputs
  are computed with torch in float64 when the input is float64, else in float32, on the input's
  device, and the result is a tensor.
"""

from __future__ import annotations

import sys
from typing import Any

import numpy as np


def is_tensor(x: Any) -> bool:
    """True for a ``torch.Tensor`` (without importing torch when nobody else has; while another thread
    is still importing it, ``torch.Tensor`` may not exist yet, and no object can be one)."""
    tensor = getattr(sys.modules.get("torch"), "Tensor", None)
    return tensor is not None and isinstance(x, tensor)


def check_video(x: Any, name: str, *, min_frames: int = 1) -> None:
    """Raise ``ValueError`` unless ``x`` is a ``T×H×W×C`` or ``B×T×H×W×C`` numpy array / tensor."""
    if not (isinstance(x, np.ndarray) or is_tensor(x)):
        raise TypeError(f"{name}: expected a numpy array or torch tensor, got {type(x).__name__}")
    if x.ndim not in (4, 5):
        raise ValueError(f"{name}: expected a T×H×W×C video or a B×T×H×W×C batch, got shape {tuple(x.shape)}")
    if x.shape[-4] < min_frames:
        raise ValueError(f"{name}: needs at least {min_frames} frame(s), got shape {tuple(x.shape)}")
    if str(x.dtype).split(".")[-1] == "bool":
        raise TypeError(f"{name}: boolean videos are not supported; use uint8 or float")


def resolve_data_range(x: Any, data_range: float | None, name: str) -> float:
    """``data_range`` as a positive float; ``None`` is only accepted for uint8 input (→ 255)."""
    if data_range is None:
        if str(x.dtype).split(".")[-1] == "uint8":
            return 255.0
        raise ValueError(
            f"{name}: data_range is required for {str(x.dtype).split('.')[-1]} input "
            "(1.0 for values in [0, 1], 255.0 for [0, 255])"
        )
    data_range = float(data_range)
    if not data_range > 0:
        raise ValueError(f"{name}: data_range must be > 0, got {data_range}")
    return data_range


def check_pair(preds: Any, target: Any) -> None:
    """Both videos valid, of one backend and one shape."""
    check_video(preds, "preds")
    check_video(target, "target")
    if is_tensor(preds) != is_tensor(target):
        raise TypeError("preds and target must both be numpy arrays or both be torch tensors")
    if tuple(preds.shape) != tuple(target.shape):
        raise ValueError(f"preds and target shapes differ: {tuple(preds.shape)} vs {tuple(target.shape)}")


def to_float(x: Any) -> Any:
    """float64 numpy array, or a float tensor (float64 stays float64, anything else float32)."""
    if isinstance(x, np.ndarray):
        return x.astype(np.float64, copy=False)
    import torch

    return x if x.dtype in (torch.float64, torch.float32) else x.to(torch.float32)


def is_int_tensor(x: Any) -> bool:
    """A torch tensor of an integer dtype (uint8 video): its differences are summed exactly."""
    return is_tensor(x) and not x.dtype.is_floating_point and not x.dtype.is_complex


def exact_frame_mean(diff: Any, power: int) -> Any:
    """Mean of ``|diff|**power`` over H, W, C of an integer tensor, summed exactly in int64 (float64)."""
    import torch

    d = diff.abs() if power == 1 else diff.square()
    n = d.shape[-1] * d.shape[-2] * d.shape[-3]
    return d.sum(dim=(-3, -2, -1), dtype=torch.int64).to(torch.float64) / n


def int_diff(a: Any, b: Any) -> Any:
    """``a - b`` of two integer tensors, widened to int32 (no wrap-around of uint8)."""
    import torch

    return a.to(torch.int32) - b.to(torch.int32)


def frame_mean(x: Any) -> Any:
    """Mean over the last three axes (H, W, C): one value per frame, shape ``[B×]T``."""
    return x.mean(axis=(-3, -2, -1)) if isinstance(x, np.ndarray) else x.mean(dim=(-3, -2, -1))


def mean_frames(x: Any) -> Any:
    """Mean over the frame axis (the last one of a ``[B×]T`` curve)."""
    return x.mean(axis=-1) if isinstance(x, np.ndarray) else x.mean(dim=-1)

