"""The Gaussian blur of the ``blur`` baseline (a separable kernel, numpy only)."""

from __future__ import annotations

import numpy as np


def gaussian_blur(video: np.ndarray, kernel_size: int, sigma: float) -> np.ndarray:
    """Blur each frame of a ``T×H×W×C`` uint8 video with a separable ``kernel_size`` Gaussian of
    std ``sigma`` (edges mirrored, numpy's ``reflect``), rounded back to uint8."""
    radius = kernel_size // 2
    taps = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)
    taps /= taps.sum()
    mode = "reflect" if min(video.shape[1:3]) > radius else "edge"
    x = np.pad(video.astype(np.float64), ((0, 0), (radius, radius), (radius, radius), (0, 0)), mode=mode)
    h, w = video.shape[1:3]
    x = sum(t * x[:, i:i + h] for i, t in enumerate(taps))
    x = sum(t * x[:, :, i:i + w] for i, t in enumerate(taps))
    return np.clip(np.rint(x), 0, 255).astype(np.uint8)
