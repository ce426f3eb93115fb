"""Full-reference frame metrics: ``psnr``, ``ssim``, ``mse``, ``mae``, ``motion_error``.

Every function takes ``preds`` and ``target`` of one shape, ``T×H×W×C`` (one video) or
``B×T×H×W×C`` (a batch), numpy arrays or torch tensors, uint8 or float (see
:mod:`wfeval.functional._video` for dtypes and ``data_range``). The result is one value per
video (a 0-d array / tensor, or shape ``B``), or with ``per_frame=True`` the per-frame curve
(shape ``T`` or ``B×T``). Frames are compared one to one; the mean over frames is unweighted.

Variants:

* ``mse`` / ``mae``: mean squared / absolute error over H, W and C of each frame, in the input's
  units (uint8 levels for uint8 input).
* ``motion_error``: mean absolute difference between the frame-to-frame changes of the two
  videos, ``mean |(p[t] − p[t−1]) − (x[t] − x[t−1])|`` over H, W and C of each transition
  ``t−1 → t``, in the input's units: one value per transition (``T−1`` of them). A dynamics
  error: a frozen video on moving content scores the motion it misses, a constant colour shift
  scores 0, while PSNR on mostly static content barely sees either.
* ``psnr``: ``10·log10(data_range² / MSE)`` in dB. ``average="frames"`` (default) averages the
  per-frame PSNRs; ``average="mse"`` takes the PSNR of the MSE averaged over frames. Identical
  frames give ``inf``; ``max_db`` (default ``None``: no cap) clamps each value to at most
  ``max_db`` (applied per frame before averaging with ``average="frames"``).
* ``ssim``: Wang et al. 2004 as most video papers compute it: Gaussian window 11×11, σ=1.5,
  K1=0.01, K2=0.03, population covariance, the valid region only (no padding), each channel
  separately, then the mean over channels and positions. Equal to scikit-image's
  ``structural_similarity(gaussian_weights=True, sigma=1.5, use_sample_covariance=False,
  data_range=..., channel_axis=-1)`` per frame. Frames must be at least 11×11. Float64 inputs
  (and every numpy input) are computed in float64 (|Δ| vs scikit-image < 1e-12); float32 /
  uint8 tensors in float32 (|Δ| < 1e-5 measured, see docs/metrics.md).

Integer (uint8) tensors give ``mse``/``mae``/``psnr`` from exact int64 sums (float64 results, equal
to the numpy path up to the last bits of the division); float tensors compute in their own dtype.
"""

from __future__ import annotations

import functools
from typing import Any

import numpy as np

from wfeval.functional._video import (
    check_pair,
    check_video,
    exact_frame_mean,
    frame_mean,
    int_diff,
    is_int_tensor,
    is_tensor,
    mean_frames,
    resolve_data_range,
    to_float,
)
from wfeval.utils.parallel import map_torch_cpu

__all__ = ["psnr", "ssim", "mse", "mae", "motion_error"]

SSIM_SIGMA = 1.5
SSIM_RADIUS = 5  # int(3.5 * 1.5 + 0.5): the 11-tap window of scikit-image / scipy.ndimage
SSIM_K1, SSIM_K2 = 0.01, 0.03
_CHUNK_ELEMENTS = 1 << 18  # frames·C·H·W per ssim step on the CPU: bounds temporaries, keeps them in cache
# on a GPU, chunks of one CPU-cache size launched ~20 kernels per frame: 960 frames of 256×256 took
# 1.1 s on an H200, 16× torchmetrics (perf/metric_throughput.py --device cuda); 2**25
# elements (128 MB a map, ~2 GB of temporaries) keep launches few and memory bounded
_DEVICE_CHUNK_ELEMENTS = 1 << 25
_WINDOW = 64  # longest axis filtered by one banded product; longer axes go in overlapping windows
AVERAGES = ("frames", "mse")


def _finish(curve: Any, per_frame: bool) -> Any:
    return curve if per_frame else mean_frames(curve)


def mse(preds: Any, target: Any, *, per_frame: bool = False) -> Any:
    """Mean squared error per frame (input units²), averaged over frames unless ``per_frame``."""
    check_pair(preds, target)
    if is_int_tensor(preds) and is_int_tensor(target):  # uint8 tensors: exact integer sums, float64 result
        return _finish(exact_frame_mean(int_diff(preds, target), 2), per_frame)
    diff = to_float(preds) - to_float(target)
    squared = np.square(diff, out=diff) if isinstance(diff, np.ndarray) else diff.square_()
    return _finish(frame_mean(squared), per_frame)


def mae(preds: Any, target: Any, *, per_frame: bool = False) -> Any:
    """Mean absolute error per frame (input units), averaged over frames unless ``per_frame``."""
    check_pair(preds, target)
    if is_int_tensor(preds) and is_int_tensor(target):
        return _finish(exact_frame_mean(int_diff(preds, target), 1), per_frame)
    diff = to_float(preds) - to_float(target)
    return _finish(frame_mean(abs(diff)), per_frame)


def motion_error(preds: Any, target: Any, *, per_frame: bool = False) -> Any:
    """Mean absolute difference of the frame-to-frame changes (input units), one value per
    transition ``t−1 → t``, averaged over transitions unless ``per_frame``; needs 2 frames."""
    check_pair(preds, target)
    check_video(preds, "preds", min_frames=2)
    diff = to_float(preds) - to_float(target)  # (p[t] - p[t-1]) - (x[t] - x[t-1]) = d[t] - d[t-1]
    return _finish(frame_mean(abs(diff[..., 1:, :, :, :] - diff[..., :-1, :, :, :])), per_frame)


def _db(error: Any, data_range: float, max_db: float | None) -> Any:
    if isinstance(error, np.ndarray) or np.isscalar(error):
        with np.errstate(divide="ignore"):
            out = 10.0 * np.log10(data_range**2 / np.asarray(error, dtype=np.float64))
        return out if max_db is None else np.minimum(out, max_db)
    out = 10.0 * (data_range**2 / error).log10()
    return out if max_db is None else out.clamp(max=max_db)


def psnr(preds: Any, target: Any, *, data_range: float | None = None, average: str = "frames",
         per_frame: bool = False, max_db: float | None = None) -> Any:
    """Peak signal-to-noise ratio in dB (``inf`` for identical frames unless ``max_db`` caps it).

    ``average="frames"``: mean of per-frame PSNRs; ``average="mse"``: PSNR of the mean MSE.
    """
    if average not in AVERAGES:
        raise ValueError(f"psnr: average must be one of {AVERAGES}, got {average!r}")
    data_range = resolve_data_range(preds, data_range, "psnr")
    errors = mse(preds, target, per_frame=True)
    if per_frame or average == "frames":
        return _finish(_db(errors, data_range, max_db), per_frame)
    return _db(mean_frames(errors), data_range, max_db)


@functools.lru_cache(maxsize=32)
def _band_np(n: int) -> np.ndarray:
    """``(n-10)×n`` matrix whose rows are the normalised 11-tap Gaussian at each valid offset."""
    offsets = np.arange(-SSIM_RADIUS, SSIM_RADIUS + 1, dtype=np.float64)
    taps = np.exp(-0.5 * (offsets / SSIM_SIGMA) ** 2)
    taps /= taps.sum()
    rows = n - 2 * SSIM_RADIUS
    band = np.zeros((rows, n))
    band[np.arange(rows)[:, None], np.arange(rows)[:, None] + np.arange(2 * SSIM_RADIUS + 1)] = taps
    band.flags.writeable = False
    return band


def _band(n: int, like: Any) -> Any:
    band = _band_np(n)
    if isinstance(like, np.ndarray):
        return band
    import torch

    return torch.tensor(band, dtype=like.dtype, device=like.device)


def _filter_last(z: Any) -> Any:
    """Valid 11-tap Gaussian along the last axis (``n`` → ``n-10``) as banded matrix products.

    Axes longer than ``_WINDOW`` are cut into overlapping windows (10 samples of halo) so the
    cost per sample stays bounded whatever the frame size; all windows go in one product.
    """
    n = z.shape[-1]
    out_n, halo = n - 2 * SSIM_RADIUS, 2 * SSIM_RADIUS
    if n <= _WINDOW:
        return z @ _band(n, z).T
    tiles = -(-out_n // (_WINDOW - halo))
    tile = -(-out_n // tiles)
    pad = tiles * tile + halo - n
    band_t = _band(tile + halo, z).T
    if isinstance(z, np.ndarray):  # numpy: one broadcast product over a view of the windows
        z = np.pad(z, [(0, 0)] * (z.ndim - 1) + [(0, pad)])
        out = np.lib.stride_tricks.sliding_window_view(z, tile + halo, axis=-1)[..., ::tile, :] @ band_t
        return out.reshape(*out.shape[:-2], tiles * tile)[..., :out_n]
    import torch  # torch: the windows copied into one 2-D product (much faster than a strided batch)

    windows = torch.nn.functional.pad(z, (0, pad)).unfold(-1, tile + halo, tile)
    out = windows.reshape(-1, tile + halo) @ band_t
    return out.reshape(*windows.shape[:-2], tiles * tile)[..., :out_n]


def _blur(z: Any) -> Any:
    """Separable valid Gaussian of ``…×H×W`` maps; the result is transposed (``…×W'×H'``)."""
    return _filter_last(_filter_last(z).swapaxes(-1, -2))


def _ssim_chunk(x: Any, y: Any) -> Any:
    """Per-frame SSIM of ``N×C×H×W`` frames scaled to a data range of 1 (maps kept transposed)."""
    mx, my = _blur(x), _blur(y)
    vx = _blur(x * x) - mx * mx
    vy = _blur(y * y) - my * my
    vxy = _blur(x * y) - mx * my
    c1, c2 = SSIM_K1**2, SSIM_K2**2
    s = ((2 * mx * my + c1) * (2 * vxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))
    return s.mean(axis=(1, 2, 3)) if isinstance(s, np.ndarray) else s.mean(dim=(1, 2, 3))


def ssim(preds: Any, target: Any, *, data_range: float | None = None, per_frame: bool = False) -> Any:
    """Structural similarity (Gaussian 11×11, σ=1.5, valid region, channel mean), in [-1, 1]."""
    check_pair(preds, target)
    data_range = resolve_data_range(preds, data_range, "ssim")
    *lead, h, w, c = preds.shape
    if min(h, w) < 2 * SSIM_RADIUS + 1:
        raise ValueError(f"ssim: frames must be at least 11×11 (the Gaussian window), got {h}×{w}")
    x, y = (to_float(v).reshape(-1, h, w, c) for v in (preds, target))
    if is_tensor(x):
        x, y = (v.permute(0, 3, 1, 2) / data_range for v in (x, y))
    else:
        x, y = (np.ascontiguousarray(v.transpose(0, 3, 1, 2)) / data_range for v in (x, y))
    on_device = is_tensor(x) and x.device.type != "cpu"
    step = max(1, (_DEVICE_CHUNK_ELEMENTS if on_device else _CHUNK_ELEMENTS) // (c * h * w))
    starts = range(0, x.shape[0], step)
    if is_tensor(x) and not on_device:  # chunks on every core, one torch thread each
        parts = map_torch_cpu(lambda i: _ssim_chunk(x[i:i + step], y[i:i + step]), list(starts))
    else:
        parts = [_ssim_chunk(x[i:i + step], y[i:i + step]) for i in starts]
    if is_tensor(x):
        import torch

        curve = torch.cat(parts).reshape(*lead)
    else:
        curve = np.concatenate(parts).reshape(*lead)
    return _finish(curve, per_frame)

