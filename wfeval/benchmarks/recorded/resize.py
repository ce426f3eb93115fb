"""The resize filter of recorded frames: exact area averaging (a box filter), integer arithmetic.

Output pixel ``(i, j)`` is the mean of the input pixels it covers, each weighted by the area of
overlap, rounded half up: for downscaling this is what OpenCV calls ``INTER_AREA`` (DIAMOND and
the usual Atari preprocessing resize 210×160 frames to 64×64 that way), without its fixed-point
rounding. Weights and sums are integers (int32, or int64 for frames too large for it), so the
result is exact and the same on every machine.
"""

from __future__ import annotations

import numpy as np


def area_weights(n_in: int, n_out: int) -> np.ndarray:
    """``n_out × n_in`` integer overlaps (in units of 1/n_out input pixel); each row sums to n_in."""
    i = np.arange(n_out)[:, None]
    j = np.arange(n_in)[None, :]
    lo = np.maximum(i * n_in, j * n_out)
    hi = np.minimum((i + 1) * n_in, (j + 1) * n_out)
    return np.clip(hi - lo, 0, None)


def _taps(n_in: int, n_out: int) -> tuple[np.ndarray, np.ndarray]:
    """The nonzero overlaps as ``(index, weight)``, both ``n_out × k`` (k: most inputs one output covers)."""
    weights = area_weights(n_in, n_out)
    k = int((weights > 0).sum(axis=1).max())
    index = np.argsort(weights == 0, axis=1, kind="stable")[:, :k]  # the nonzero columns first, in order
    return index, np.take_along_axis(weights, index, axis=1)


def _reduce(x: np.ndarray, axis: int, n_out: int) -> np.ndarray:
    """Weighted sums along ``axis`` of an integer array (exact)."""
    index, weights = _taps(x.shape[axis], n_out)
    gathered = np.take(x, index, axis=axis)  # axis becomes (n_out, k)
    shape = [1] * gathered.ndim
    shape[axis], shape[axis + 1] = weights.shape
    return (gathered * weights.reshape(shape).astype(x.dtype)).sum(axis=axis + 1, dtype=x.dtype)


def area_resize(frames: np.ndarray, size: tuple[int, int] | list[int] | None) -> np.ndarray:
    """Resize ``…×H×W×C`` uint8 frames to ``size=(height, width)``; ``None`` or the same size: unchanged."""
    frames = np.asarray(frames)
    if size is None:
        return frames
    h_out, w_out = int(size[0]), int(size[1])
    h_in, w_in = frames.shape[-3], frames.shape[-2]
    if (h_out, w_out) == (h_in, w_in):
        return frames
    if h_out < 1 or w_out < 1:
        raise ValueError(f"resize: size must be positive, got {size}")
    lead = frames.shape[:-3]
    den = h_in * w_in
    dtype = np.int32 if 2 * 255 * den + den < 2**31 else np.int64  # no sum can overflow
    x = frames.reshape((-1, h_in, w_in, frames.shape[-1])).astype(dtype)  # N×H×W×C
    num = _reduce(_reduce(x, 1, h_out), 2, w_out)  # exact integer sums, weights total h_in·w_in
    out = (2 * num + den) // (2 * den)  # round half up
    return out.reshape(lead + (h_out, w_out, frames.shape[-1])).astype(np.uint8)
