"""The resize filter of recorded frames: exact area averaging (a box filter), integer arithmetic.

Output pixel ``(i, j)`` is the mean of the input pixels it covers, each weighted by the area of
overlap, rounded half up: for downscaling this is what OpenCV calls ``INTER_AREA`` (DIAMOND and
the usual Atari preprocessing resize 210×160 frames to 64×64 that way), without its fixed-point
rounding. Weights and sums are integers, so the result is exact and the same on every machine.

The weighted sums are two matrix products (BLAS, each over all the frames at once) in float32, or
float64 for frames too large for it: every product and partial sum is a nonnegative integer no larger
than the full sum, 255·H·W, below 2**24 (float32) or 2**53 (float64), which the type holds exactly
whatever the order of summation, so the sums are the integer ones (7× less CPU than gathering the
taps in int32 on 210×160 Atari frames; the same bytes: the pinned dataset hashes), on one BLAS thread (a
product is the same on any count of threads; on one 210×160 frame, the learner's step, two threads took
4.6 CPU-ms against 1.0 on a busy machine: they wait on each other).
"""

from __future__ import annotations

import numpy as np

from wfeval.utils.parallel import one_blas_thread


def area_weights(n_in: int, n_out: int) -> np.ndarray:
    """``n_out × n_in`` integer overlaps (in units of 1/n_out input pixel); each row sums to n_in."""
    i = np.arange(n_out)[:, None]
    j = np.arange(n_in)[None, :]
    lo = np.maximum(i * n_in, j * n_out)
    hi = np.minimum((i + 1) * n_in, (j + 1) * n_out)
    return np.clip(hi - lo, 0, None)


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
    if frames.dtype != np.uint8 and frames.size and (frames.min() < 0 or frames.max() > 255):
        raise ValueError(f"resize: frames must hold uint8 levels 0-255, got {frames.dtype} values outside them")
    lead, channels = frames.shape[:-3], frames.shape[-1]
    den = h_in * w_in
    if 255 * den >= 2**53:  # a sum float64 might round: never at image sizes
        raise ValueError(f"resize: {h_in}×{w_in} frames are too large for exact sums")
    exact = np.float32 if 255 * den < 2**24 else np.float64  # integers up to 255·H·W held exactly
    rows = area_weights(h_in, h_out).astype(exact)  # h_out × h_in, each row sums to h_in
    cols = area_weights(w_in, w_out).astype(exact).T  # w_in × w_out, each column sums to w_in
    x = frames.reshape((-1, h_in, w_in * channels))
    n = x.shape[0]
    x = np.ascontiguousarray(x.transpose(1, 0, 2), dtype=exact).reshape(h_in, -1)  # H × (N·W·C): one product
    with one_blas_thread():  # small products (a frame a step in a learner's loop): BLAS's threads cost 4–8×
        x = (rows @ x).reshape(h_out, n, w_in, channels)  # sums over the rows: h_out × N × W × C
        x = np.ascontiguousarray(x.transpose(1, 0, 3, 2)).reshape(-1, w_in)  # (N·h_out·C) × W
        num = (x @ cols).reshape(n, h_out, channels, w_out).transpose(0, 1, 3, 2).astype(np.int64)  # exact sums
    out = (2 * num + den) // (2 * den)  # round half up
    return out.reshape(lead + (h_out, w_out, channels)).astype(np.uint8)
