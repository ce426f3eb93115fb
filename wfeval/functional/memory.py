"""Memory formulas: is a place drawn the same when the agent comes back to it?

Frames are compared on what the benchmark declares static (a per-frame boolean mask: walls and
background, never the moving objects), after averaging ``pool``×``pool`` blocks of pixels: memory is
about the content of a place, so i.i.d. pixel noise (σ levels) shrinks to σ/pool while a redrawn
texture does not. A block counts when every pixel of it is static in both frames.

* ``frame_pair_error(a, b, mask_a, mask_b, pool)``: the mean absolute difference (uint8 levels) of the
  block means of two frames over the static blocks of both; None when no block is static;
* ``revisit_errors(video, pairs, masks, pool)``: one (gap, error) per pair of frame indices
  ``(first visit, revisit)`` — also the loops of ``reversibility_error`` (an action sequence followed
  by its inverse: the frame before it against the frame after it);
  With ``reference`` (the true video; the maze, whose rolling ball never returns exactly), each pair
  scores the model's change against the true change: the mean over static blocks of
  ``|(x̂_j − x̂_i) − (x_j − x_i)|``; where the truth does not change on the static blocks (gridworld:
  exact returns) this is the plain ``|x̂_j − x̂_i|``, number for number; with ``agree`` (a dataset,
  whose scene may change between the visits), only the blocks where the true frames' block means
  differ by at most ``agree`` levels in every channel count, and a pair with none is dropped;
* ``gap_bucket(gap)``: the power of two a gap is reported under (1, 2, 4, 8, …: gaps in
  ``(b/2, b]``); ``bucket_means`` averages errors per bucket; the headline of a sample is the mean of
  its bucket means (each gap length weighs the same, however many pairs it has).
"""

from __future__ import annotations

from typing import Any, Iterable, Sequence

import numpy as np

__all__ = ["block_means", "frame_pair_error", "revisit_errors", "gap_bucket", "bucket_means"]


def block_means(frame: Any, pool: int) -> np.ndarray:
    """``H×W×C`` → ``(H//pool)×(W//pool)×C`` float64 means of ``pool``×``pool`` blocks (ragged edge dropped)."""
    frame = np.asarray(frame, np.float64)
    h, w = frame.shape[0] // pool, frame.shape[1] // pool
    if not h or not w:
        raise ValueError(f"pool={pool} is larger than the {frame.shape[0]}×{frame.shape[1]} frame")
    return frame[:h * pool, :w * pool].reshape(h, pool, w, pool, -1).mean(axis=(1, 3))


def _static_blocks(mask: Any, pool: int) -> np.ndarray:
    mask = np.asarray(mask, bool)
    h, w = mask.shape[0] // pool, mask.shape[1] // pool
    return mask[:h * pool, :w * pool].reshape(h, pool, w, pool).all(axis=(1, 3))


def frame_pair_error(a: Any, b: Any, mask_a: Any, mask_b: Any, pool: int = 8,
                     true_pair: tuple[Any, Any] | None = None, agree: float | None = None) -> float | None:
    if pool < 1:
        raise ValueError(f"pool must be >= 1, got {pool}")
    if np.shape(a) != np.shape(b) or np.shape(mask_a) != np.shape(a)[:2] or np.shape(mask_b) != np.shape(a)[:2]:
        raise ValueError(f"frames {np.shape(a)}, {np.shape(b)} and masks {np.shape(mask_a)}, {np.shape(mask_b)} differ")
    if agree is not None and true_pair is None:
        raise ValueError("agree keeps the blocks where the true frames agree: it needs the true frames")
    keep = _static_blocks(mask_a, pool) & _static_blocks(mask_b, pool)
    if not keep.any():
        return None
    change = block_means(b, pool) - block_means(a, pool)
    if true_pair is not None:
        if np.shape(true_pair[0]) != np.shape(a) or np.shape(true_pair[1]) != np.shape(a):
            raise ValueError(f"true frames {np.shape(true_pair[0])}, {np.shape(true_pair[1])} differ from {np.shape(a)}")
        true_change = block_means(true_pair[1], pool) - block_means(true_pair[0], pool)
        change = change - true_change
        if agree is not None:  # only where the true frames agree: what moved in the scene is left out
            keep = keep & (np.abs(true_change) <= agree).all(axis=-1)
            if not keep.any():
                return None
    return float(np.abs(change)[keep].mean())


def revisit_errors(video: Any, pairs: Iterable[Sequence[int]], masks: Any, pool: int = 8,
                   reference: Any = None, agree: float | None = None) -> list[tuple[int, float]]:
    """``(j − i, error)`` for each pair ``(i, j)`` of frame indices with at least one static block
    (with ``reference``: the change against the true change, see the module; with ``agree`` too: only
    on the blocks where the true frames' block means differ by at most ``agree`` levels)."""
    video, masks = np.asarray(video), np.asarray(masks, bool)
    if masks.shape != video.shape[:3]:
        raise ValueError(f"static masks {masks.shape} do not match the video {video.shape[:3]}")
    if reference is not None and np.shape(reference) != video.shape:
        raise ValueError(f"the true video {np.shape(reference)} does not match the video {video.shape}")
    out = []
    for i, j in pairs:
        if not 0 <= i < j < len(video):
            raise ValueError(f"pair ({i}, {j}) is not two increasing frame indices of a {len(video)}-frame video")
        truth = None if reference is None else (reference[i], reference[j])
        error = frame_pair_error(video[i], video[j], masks[i], masks[j], pool, truth, agree)
        if error is not None:
            out.append((int(j - i), error))
    return out


def gap_bucket(gap: int) -> int:
    if gap < 1:
        raise ValueError(f"a gap is at least 1 frame, got {gap}")
    return 1 << (int(gap) - 1).bit_length()


def bucket_means(errors: Iterable[tuple[int, float]]) -> dict[int, float]:
    """Mean error per gap bucket, buckets in increasing order."""
    sums: dict[int, list[float]] = {}
    for gap, error in errors:
        sums.setdefault(gap_bucket(gap), []).append(error)
    return {b: float(np.mean(sums[b])) for b in sorted(sums)}
