"""FVD preprocessing, named and recorded: clip selection, value mapping, resize.

A :class:`ClipRecipe` holds every choice that changes a feature; its :meth:`~ClipRecipe.digest`
keys the feature caches. Steps, in order:

1. layout: ``[T, H, W, C]`` with C = 3, or grayscale ``[T, H, W]`` / ``[T, H, W, 1]`` expanded to 3;
2. clip: ``clip_length`` frames (``None``: the whole video), the ``first`` ones or a ``random``
   window whose start is drawn from ``(seed, video sha256)`` — same video, same window, in any
   order; a shorter video is refused with :class:`ClipTooShort`;
3. values: ``[lo, hi]`` (``value_range``, uint8 default ``[0, 255]``) mapped linearly to [-1, 1];
4. resize every frame to ``resize``×``resize``:

   * ``bilinear`` (default; PyTorch/StyleGAN-V ports): ``F.interpolate(mode="bilinear",
     align_corners=False, antialias=False)``, i.e. half-pixel centres, no antialiasing — the same
     as TF2 ``tf.image.resize(method="bilinear")`` when upsampling;
   * ``bilinear_antialias``: the same with ``antialias=True`` (differs only when downsampling);
   * ``bilinear_tf1``: TF1 ``tf.image.resize_bilinear(align_corners=False)`` as in the original
     TF FVD code (no half-pixel centres: source = destination × in/out).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass

import numpy as np

CLIP_SELECTIONS = ("first", "random")
RESIZE_MODES = ("bilinear", "bilinear_antialias", "bilinear_tf1")
_RESIZE_IMPL = {
    "bilinear": "torch interpolate bilinear, align_corners=False, antialias=False",
    "bilinear_antialias": "torch interpolate bilinear, align_corners=False, antialias=True",
    "bilinear_tf1": "TF1 resize_bilinear, align_corners=False, half_pixel_centers=False",
}
RECIPE_VERSION = 1
FEATURE_NAME = "I3D logits (400, pre-softmax, time-averaged)"
MIN_FRAMES = 9  # I3D: three temporal stride-2 stages, then a VALID temporal window of 2


class ClipTooShort(ValueError):
    """The video has fewer frames than the clip needs."""


@dataclass(frozen=True)
class ClipRecipe:
    """Every preprocessing choice that changes an I3D feature."""

    clip_length: int | None = 16
    clip_selection: str = "first"
    seed: int = 0
    resize: int = 224
    resize_mode: str = "bilinear"
    value_range: tuple[float, float] = (0.0, 255.0)

    def __post_init__(self) -> None:
        if self.clip_length is not None and self.clip_length < MIN_FRAMES:
            raise ValueError(f"clip_length must be >= {MIN_FRAMES} (I3D's temporal receptive field) or null, "
                             f"got {self.clip_length}")
        if self.clip_selection not in CLIP_SELECTIONS:
            raise ValueError(f"clip_selection must be one of {', '.join(CLIP_SELECTIONS)}, got {self.clip_selection!r}")
        if self.resize_mode not in RESIZE_MODES:
            raise ValueError(f"resize_mode must be one of {', '.join(RESIZE_MODES)}, got {self.resize_mode!r}")
        if not 193 <= self.resize <= 224:
            raise ValueError(f"resize must be in [193, 224] so that I3D's final feature map is 1×1 "
                             f"(224 is the reference), got {self.resize}")
        lo, hi = self.value_range
        if not hi > lo:
            raise ValueError(f"value_range must be [low, high] with high > low, got {list(self.value_range)}")
        object.__setattr__(self, "value_range", (float(lo), float(hi)))

    def to_dict(self) -> dict:
        """The recorded recipe; ``clip_seed`` is null unless the clip window is random."""
        return {
            "clip_length": self.clip_length,
            "clip_selection": self.clip_selection,
            "clip_seed": self.seed if self.clip_selection == "random" else None,
            "resize": self.resize,
            "resize_mode": self.resize_mode,
            "resize_impl": _RESIZE_IMPL[self.resize_mode],
            "value_range": list(self.value_range),
            "input_range": [-1.0, 1.0],
            "grayscale": "repeated to 3 channels",
            "version": RECIPE_VERSION,
        }

    def digest(self) -> str:
        return hashlib.sha256(json.dumps(self.to_dict(), sort_keys=True).encode()).hexdigest()


def as_rgb(video: np.ndarray) -> np.ndarray:
    """``[T, H, W, 3]``; grayscale ``[T, H, W]`` or ``[T, H, W, 1]`` repeated to 3 channels."""
    video = np.asarray(video)
    if video.ndim == 3:
        video = video[..., None]
    if video.ndim != 4 or video.shape[-1] not in (1, 3):
        raise ValueError(f"expected a video [frames, height, width, 3] (or grayscale), got shape {video.shape}")
    if video.shape[-1] == 1:
        video = np.repeat(video, 3, axis=-1)
    return video


def clip_start(n_frames: int, recipe: ClipRecipe, video_key: str = "") -> int:
    """First frame of the clip; ``random`` draws it from ``(seed, video_key)``."""
    length = n_frames if recipe.clip_length is None else recipe.clip_length
    if n_frames < length:
        raise ClipTooShort(f"video has {n_frames} frames, fewer than clip_length {length}")
    if n_frames < MIN_FRAMES:
        raise ClipTooShort(f"video has {n_frames} frames; I3D needs at least {MIN_FRAMES}")
    if recipe.clip_selection == "first" or n_frames == length:
        return 0
    digest = hashlib.sha256(f"{recipe.seed}/{video_key}".encode()).digest()
    return int(np.random.default_rng(int.from_bytes(digest[:8], "little")).integers(0, n_frames - length + 1))


def select_clip(video: np.ndarray, recipe: ClipRecipe, video_key: str = "") -> tuple[np.ndarray, int]:
    """``(clip [L, H, W, 3], start)`` after the layout check."""
    video = as_rgb(video)
    start = clip_start(video.shape[0], recipe, video_key)
    length = video.shape[0] if recipe.clip_length is None else recipe.clip_length
    return video[start:start + length], start
