"""Limits on what a file may make wfeval decode: an absurd input is the sample's input error,
found before (or while) it is decoded, never a memory blow-up. Every limit can be raised.

The folder benchmark takes them as ``benchmark.limits.<name>=...``; :func:`read_video` and
friends take a :class:`Limits` (default: :data:`DEFAULT_LIMITS`).
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from typing import Any, Mapping

from wfeval.io._errors import VideoReadError


@dataclass(frozen=True)
class Limits:
    max_frame_pixels: int = 8192 * 8192  # pixels of one frame or image (8K video fits)
    max_frames: int = 100_000  # frames of one video
    max_video_pixels: int = 1 << 30  # decoded pixels of one video (3 GiB as uint8 RGB)
    max_array_bytes: int = 4 << 30  # bytes of one .npy / .npz array, read from its header
    max_actions: int = 100_000  # actions of one sample

    @classmethod
    def from_mapping(cls, values: Mapping[str, Any] | None, key: str = "limits") -> "Limits":
        """Limits from a config mapping; ValueError naming ``key.<name>`` for an unknown or bad value."""
        values = dict(values or {})
        names = [f.name for f in dataclasses.fields(cls)]
        unknown = [k for k in values if k not in names]
        if unknown:
            raise ValueError(f"{key}: unknown limit(s) {', '.join(unknown)}; known: {', '.join(names)}")
        for name, value in values.items():
            if value is None:
                continue
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"{key}.{name}: expected a positive integer, got {value!r}")
        return cls(**{k: v for k, v in values.items() if v is not None})


DEFAULT_LIMITS = Limits()


def _raise(path: Any, what: str, value: int, limit: int, name: str) -> None:
    raise VideoReadError(path, f"{what} {value:,} exceeds the limit of {limit:,} "
                               f"(raise it with benchmark.limits.{name}={value} if the file is right)")


def check_frame(path: Any, height: int, width: int, limits: Limits) -> None:
    if height * width > limits.max_frame_pixels:
        _raise(path, f"a frame of {width}×{height} =", height * width, limits.max_frame_pixels, "max_frame_pixels")


def check_frames(path: Any, frames: int, limits: Limits) -> None:
    if frames > limits.max_frames:
        _raise(path, "frame count", frames, limits.max_frames, "max_frames")


def check_video(path: Any, frames: int, height: int, width: int, limits: Limits) -> None:
    check_frames(path, frames, limits)
    check_frame(path, height, width, limits)
    if frames * height * width > limits.max_video_pixels:
        _raise(path, "decoded pixels", frames * height * width, limits.max_video_pixels, "max_video_pixels")


def check_array_header(path: Any, shape: tuple[int, ...], itemsize: int, limits: Limits) -> None:
    """Checks a ``.npy`` header (shape, item size) before the array is read."""
    size = itemsize
    for dim in shape:
        size *= int(dim)
    if size > limits.max_array_bytes:
        _raise(path, f"array of shape {tuple(shape)}:", size, limits.max_array_bytes, "max_array_bytes")
    if len(shape) >= 3:
        height, width = (shape[-3], shape[-2]) if len(shape) >= 4 or shape[-1] in (1, 2, 3, 4) else shape[-2:]
        check_frame(path, int(height), int(width), limits)
    if len(shape) == 4:
        check_frames(path, int(shape[0]), limits)


MAX_PIXELS = (1 << 31) - 1  # FFmpeg's max_pixels is an int


def ffmpeg_max_pixels(limits: Limits) -> int:
    """FFmpeg's ``max_pixels`` for ``limits``: a quarter above the limit (decoders check their padded,
    aligned buffers against it), so that a frame within the limit always decodes and the exact check
    is wfeval's own, on the frame's size."""
    return min(limits.max_frame_pixels * 5 // 4 + (1 << 16), MAX_PIXELS)


def ffmpeg_hint(exc: BaseException, limits: Limits) -> str:
    """What an EINVAL from FFmpeg may mean: its ``max_pixels`` (the limit) refused a frame."""
    if getattr(exc, "errno", None) != 22:
        return ""
    return (f"; FFmpeg refuses a frame of more than {ffmpeg_max_pixels(limits):,} pixels that way, the limit "
            f"of {limits.max_frame_pixels:,} with room for its padding: raise benchmark.limits.max_frame_pixels if "
            "the file is right")
