"""Batched, device-aware I3D feature extraction from uint8 clips.

``I3DExtractor(weights, recipe).features(clips)`` maps clips ``[L, H, W, 3]`` (already selected by
:func:`wfeval.features.preprocess.select_clip`) to float32 features ``[N, 400]``: consecutive clips
of the same shape go through the network ``batch_size`` at a time, on ``cuda`` when present
(``device="auto"``), with TF32 off.
"""

from __future__ import annotations

from typing import Iterator, Sequence

import numpy as np
import torch
import torch.nn.functional as F

from wfeval.features.network import input_memory_format, load_network, pick_device, reproducible_math
from wfeval.features.preprocess import ClipRecipe
from wfeval.features.weights import WeightsInfo


def tf1_bilinear_matrix(size_in: int, size_out: int) -> torch.Tensor:
    """``[out, in]`` weights of TF1 ``resize_bilinear(align_corners=False)`` (no half-pixel centres)."""
    src = torch.arange(size_out, dtype=torch.float64) * (size_in / size_out)
    low = src.floor().long().clamp(max=size_in - 1)
    high = (low + 1).clamp(max=size_in - 1)
    frac = src - low
    matrix = torch.zeros(size_out, size_in, dtype=torch.float64)
    matrix[torch.arange(size_out), low] += 1 - frac
    matrix[torch.arange(size_out), high] += frac
    return matrix


def resize_frames(frames: torch.Tensor, size: int, mode: str) -> torch.Tensor:
    """``[N, 3, H, W]`` float → ``[N, 3, size, size]`` with the named bilinear variant."""
    if frames.shape[-2:] == (size, size):
        return frames
    if mode == "bilinear_tf1":
        rows = tf1_bilinear_matrix(frames.shape[-2], size).to(frames)
        cols = tf1_bilinear_matrix(frames.shape[-1], size).to(frames)
        return rows @ frames @ cols.T
    return F.interpolate(frames, size=(size, size), mode="bilinear", align_corners=False,
                         antialias=mode == "bilinear_antialias")


def to_network_input(clips: np.ndarray, recipe: ClipRecipe, device: torch.device) -> torch.Tensor:
    """uint8 (or float) ``[B, L, H, W, 3]`` → float32 ``[B, 3, L, size, size]`` in [-1, 1] on ``device``."""
    x = torch.from_numpy(np.ascontiguousarray(clips)).to(device)
    b, length, h, w, c = x.shape
    lo, hi = recipe.value_range
    x = x.to(torch.float32).mul_(2.0 / (hi - lo)).add_(-1.0 - 2.0 * lo / (hi - lo))
    x = x.reshape(b * length, h, w, c).permute(0, 3, 1, 2)
    x = resize_frames(x, recipe.resize, recipe.resize_mode)
    x = x.reshape(b, length, c, recipe.resize, recipe.resize).permute(0, 2, 1, 3, 4)
    return x.contiguous(memory_format=input_memory_format(device))


DEFAULT_BATCH = {"cpu": 2, "cuda": 32}  # clips per forward pass when metric.fvd.batch_size is null


def default_batch_size(device: str = "auto") -> int:
    """Clips per I3D forward pass for a device: 2 on a CPU (measured fastest: 0.17 s per clip
    against 0.20 s at 8 and 0.21 s at 16 on 2 cores; ``perf/fvd_performance.py --sweep``),
    32 on a GPU (an H200 ran 275 / 263 / 272 / 276 clips/s at 8 / 16 / 32 / 64: flat from 8 on;
    docs/performance.md "GPU")."""
    return DEFAULT_BATCH.get(pick_device(device).type, DEFAULT_BATCH["cpu"])


def _runs(clips: Sequence[np.ndarray], batch_size: int) -> Iterator[list[np.ndarray]]:
    """Consecutive same-shape groups of at most ``batch_size`` clips."""
    batch: list[np.ndarray] = []
    for clip in clips:
        if batch and (len(batch) == batch_size or clip.shape != batch[0].shape):
            yield batch
            batch = []
        batch.append(clip)
    if batch:
        yield batch


class I3DExtractor:
    """The I3D network plus the recipe's preprocessing; ``features(clips)`` → ``[N, 400]`` float32."""

    def __init__(self, weights: WeightsInfo, recipe: ClipRecipe, *, device: str = "auto",
                 batch_size: int | None = None):
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"batch_size must be >= 1 (or None: the device's default), got {batch_size}")
        reproducible_math()
        self.device = pick_device(device)
        self.weights, self.recipe = weights, recipe
        self.batch_size = batch_size or DEFAULT_BATCH.get(self.device.type, DEFAULT_BATCH["cpu"])
        self.network = load_network(weights, str(self.device))

    def features(self, clips: Sequence[np.ndarray]) -> np.ndarray:
        """Batch after batch, each forward pass on all of torch's threads (on an idle 2-core CPU
        1.35x faster than splitting a batch over a one-thread-per-core pool: docs/performance.md)."""
        out = [self._forward(batch) for batch in _runs(clips, self.batch_size)]
        return np.concatenate(out) if out else np.zeros((0, 400), np.float32)

    @torch.inference_mode()
    def _forward(self, batch: list[np.ndarray]) -> np.ndarray:
        # A pass of one clip takes other kernels than a pass of two or more, whose rows do not depend
        # on their batch mates (bit for bit on the CPU): a lone clip goes through with a copy of
        # itself, so a video's features never depend on how its run happened to batch it.
        stacked = np.stack(batch if len(batch) > 1 else batch * 2)
        return self.network(to_network_input(stacked, self.recipe, self.device)).float().cpu().numpy()[:len(batch)]
