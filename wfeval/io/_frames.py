"""Folders of numbered image files (``frame_0001.png``, ...), one frame each, in natural order."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np

from wfeval.io._errors import VideoReadError
from wfeval.storage.safe_io import atomic_write_bytes

FRAME_SUFFIXES = (".png", ".jpg", ".jpeg", ".bmp")


def _natural_key(path: Path) -> list:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", path.name.lower())]


def frame_files(folder: Path) -> list[Path]:
    """The image files of ``folder`` (hidden files ignored), ``frame_2`` before ``frame_10``."""
    try:
        entries = list(folder.iterdir())
    except OSError as exc:
        raise VideoReadError(folder, f"cannot list the frame folder: {exc.strerror or exc}") from exc
    files = [p for p in entries if p.suffix.lower() in FRAME_SUFFIXES and not p.name.startswith(".") and p.is_file()]
    return sorted(files, key=_natural_key)


def read_frame_folder(folder: Path, *, max_frames: int | None = None, limits=None) -> np.ndarray:
    from wfeval.io._limits import DEFAULT_LIMITS, check_frames, check_video
    from wfeval.io._pyav import read_image_file

    limits = limits or DEFAULT_LIMITS
    files = frame_files(folder)
    if not files:
        raise VideoReadError(folder, f"no frame files ({', '.join(FRAME_SUFFIXES)}) in the folder")
    files = files[:max_frames]
    check_frames(folder, len(files), limits)
    frames = []
    for p in files:
        frames.append(read_image_file(p, limits=limits))
        if len(frames) == 1:
            check_video(folder, len(files), frames[0].shape[0], frames[0].shape[1], limits)
    sizes = {f.shape for f in frames}
    if len(sizes) > 1:
        first = frames[0].shape
        odd = next(p for p, f in zip(files, frames) if f.shape != first)
        raise VideoReadError(folder, f"frames differ in size: {files[0].name} is {first[:2]}, "
                                     f"{odd.name} is {next(f.shape for f in frames if f.shape != first)[:2]}")
    return np.stack(frames)


def write_frame_folder(folder: Path, frames: np.ndarray, suffix: str = ".png") -> None:
    from wfeval.io._pyav import encode_image

    folder.mkdir(parents=True, exist_ok=True)
    width = max(5, len(str(len(frames) - 1)))
    for index, frame in enumerate(frames):
        atomic_write_bytes(folder / f"frame_{index:0{width}d}{suffix}", encode_image(frame, suffix), durable=False)
