"""The one in-memory convention: uint8 RGB, ``T×H×W×3`` for videos and ``H×W×3`` for images.

Grayscale is expanded to three channels, alpha is dropped, booleans become 0/255 and integer
arrays within 0..255 are cast. Anything else (floats, 16-bit values, channel-first layouts) is
refused with the reason, because a silent rescale would change what a metric measures.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping

import numpy as np

from wfeval.io._errors import VideoReadError


@dataclass(frozen=True)
class Video:
    """Decoded frames (``T×H×W×3`` uint8, RGB) plus what the file said about them."""

    frames: np.ndarray
    fps: float | None = None
    path: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    @property
    def num_frames(self) -> int:
        return int(self.frames.shape[0])


def _channels_last(array: np.ndarray, where: str, image: bool) -> np.ndarray:
    gray_ndim = 2 if image else 3
    if array.ndim == gray_ndim:
        array = array[..., None]
    if array.ndim != gray_ndim + 1:
        expected = "H×W, H×W×C" if image else "T×H×W or T×H×W×C"
        raise VideoReadError(where, f"expected a {expected} array, got shape {tuple(array.shape)}")
    channels = array.shape[-1]
    if channels not in (1, 2, 3, 4):
        hint = ""
        if array.shape[-3] in (1, 3, 4):
            hint = " (it looks channel-first: move the channel axis last, e.g. np.moveaxis(a, -3, -1))"
        raise VideoReadError(where, f"expected 1-4 channels on the last axis, got shape {tuple(array.shape)}{hint}")
    if channels in (1, 2):  # gray, gray + alpha
        array = np.repeat(array[..., :1], 3, axis=-1)
    elif channels == 4:  # RGBA: alpha dropped, not composited
        array = array[..., :3]
    return array


def _as_uint8(array: np.ndarray, where: str) -> np.ndarray:
    if array.dtype == np.uint8:
        return array
    if array.dtype == np.bool_:
        return array.astype(np.uint8) * 255
    if np.issubdtype(array.dtype, np.integer):
        low, high = int(array.min()), int(array.max())
        if 0 <= low and high <= 255:
            return array.astype(np.uint8)
        raise VideoReadError(where, f"{array.dtype} values span {low}..{high}; expected 0..255 (uint8)")
    hint = ""
    if np.issubdtype(array.dtype, np.floating):
        hint = "; convert it yourself, e.g. (a * 255).round().clip(0, 255).astype(np.uint8) for values in [0, 1]"
    raise VideoReadError(where, f"dtype {array.dtype} is not supported (expected uint8){hint}")


def to_rgb_uint8(array: Any, *, where: str = "<array>", image: bool = False) -> np.ndarray:
    """``array`` in the convention (C-contiguous); :class:`VideoReadError` naming ``where`` if it cannot be."""
    array = np.asarray(array)
    if array.dtype == object:
        raise VideoReadError(where, "an object array is not an image or video")
    if array.size == 0:
        raise VideoReadError(where, f"empty array (shape {tuple(array.shape)})")
    array = _channels_last(array, where, image)
    return np.ascontiguousarray(_as_uint8(array, where))
