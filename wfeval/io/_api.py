"""read/write any supported video, image or array file into/from the one in-memory convention."""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

from wfeval.io import _arrays, _frames, _pyav
from wfeval.io._convention import Video, to_rgb_uint8
from wfeval.io._errors import VideoReadError, VideoWriteError
from wfeval.io._limits import DEFAULT_LIMITS, Limits
from wfeval.storage.safe_io import atomic_write_bytes

ARRAY_SUFFIXES = (".npy", ".npz")
IMAGE_SUFFIXES = _frames.FRAME_SUFFIXES
CONTAINER_SUFFIXES = tuple(_pyav.CONTAINERS) + _pyav.READ_ONLY_CONTAINERS
#: what :func:`read_video` accepts besides a folder of frames
VIDEO_SUFFIXES = ARRAY_SUFFIXES + CONTAINER_SUFFIXES
#: what :func:`write_video` writes; ``.mkv``/``.avi`` (ffv1), ``.mov`` (png), ``.npy``/``.npz`` are lossless
WRITABLE_VIDEO_SUFFIXES = ARRAY_SUFFIXES + tuple(_pyav.CONTAINERS)
LOSSLESS_SUFFIXES = (".npy", ".npz", ".mkv", ".avi", ".mov")


def media_kind(path: str | os.PathLike[str]) -> str | None:
    """``"frames"`` (a folder), ``"video"``, ``"image"``, ``"array"`` or None (not supported)."""
    path = Path(path)
    suffix = path.suffix.lower()
    if path.is_dir():
        return "frames"
    if suffix in CONTAINER_SUFFIXES:
        return "video"
    if suffix in IMAGE_SUFFIXES:
        return "image"
    if suffix in ARRAY_SUFFIXES:
        return "array"
    return None


def _exists(path: Path) -> None:
    if not path.exists():
        raise VideoReadError(path, "file not found")


def read_video(path: str | os.PathLike[str], *, max_frames: int | None = None, check_complete: bool = True,
               limits: Limits | None = None) -> Video:
    """Frames (``T×H×W×3`` uint8, RGB) and fps of a container, ``.npy``/``.npz`` or folder of frames.

    Raises :class:`VideoReadError` naming the file when it is missing, empty, truncated, corrupt
    or not a video, or when it is larger than ``limits`` allow (checked before decoding where
    the file declares its size); a single image is read as a one-frame video.
    """
    path = Path(path)
    _exists(path)
    limits = limits or DEFAULT_LIMITS
    kind = media_kind(path)
    if kind == "frames":
        frames, meta = _frames.read_frame_folder(path, max_frames=max_frames, limits=limits), {"container": "frames"}
        fps = None
    elif kind == "video":
        frames, meta = _pyav.read_container(path, max_frames=max_frames, check_complete=check_complete, limits=limits)
        fps = meta.pop("fps")
    elif kind == "image":
        frames, meta, fps = _pyav.read_image_file(path, limits=limits)[None], {"container": "image"}, None
    elif kind == "array":
        array, fps = _arrays.load_array(path, limits)
        frames, meta = to_rgb_uint8(array, where=str(path)), {"container": path.suffix.lower()[1:]}
        frames = frames[:max_frames] if max_frames else frames
    else:
        raise VideoReadError(path, f"unsupported file type {path.suffix or '(no suffix)'!r}; supported: "
                                   f"{', '.join(VIDEO_SUFFIXES + IMAGE_SUFFIXES)} or a folder of frames")
    return Video(frames=frames, fps=fps, path=str(path), metadata=meta)


def load_array(path: str | os.PathLike[str], limits: Limits | None = None) -> tuple[np.ndarray, float | None]:
    """The raw array of a ``.npy`` or ``.npz`` (and the ``.npz``'s fps), not converted; VideoReadError if
    unreadable or larger than ``limits`` allow (read from the header, before the data)."""
    path = Path(path)
    _exists(path)
    return _arrays.load_array(path, limits)


def read_image(path: str | os.PathLike[str], limits: Limits | None = None) -> np.ndarray:
    """One ``H×W×3`` uint8 picture: an image file, an ``H×W[×C]`` array, or the first frame of a video."""
    path = Path(path)
    _exists(path)
    kind = media_kind(path)
    if kind == "image":
        return _pyav.read_image_file(path, limits=limits)
    if kind == "array":
        array, _ = _arrays.load_array(path, limits)
        if np.ndim(array) == 4:
            return to_rgb_uint8(array, where=str(path))[0]
        return to_rgb_uint8(array, where=str(path), image=True)
    return read_video(path, max_frames=1, limits=limits).frames[0]


def write_video(path: str | os.PathLike[str], frames: np.ndarray, fps: float = 8.0, *,
                codec: str | None = None, crf: int | None = None) -> Path:
    """Write ``frames`` (anything :func:`to_rgb_uint8` accepts) to ``path``; its suffix picks the format.

    ``.mkv``/``.avi`` (ffv1), ``.mov`` (png), ``.npy`` and ``.npz`` round-trip exactly; ``.mp4``
    is h264 (lossy; ``crf`` 17 by default, yuv420p, or yuv444p when a side is odd). A path
    without a suffix becomes a folder of PNG frames.
    """
    path = Path(path)
    try:
        array = to_rgb_uint8(frames, where=str(path))
    except VideoReadError as exc:
        raise VideoWriteError(path, exc.reason) from None
    if not fps or fps <= 0:
        raise VideoWriteError(path, f"fps must be positive, got {fps!r}")
    suffix = path.suffix.lower()
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix in ARRAY_SUFFIXES:
        _arrays.save_array(path, array, fps)
    elif suffix in _pyav.CONTAINERS:
        _pyav.write_container(path, array, fps, codec=codec, crf=crf)
    elif suffix == "":
        _frames.write_frame_folder(path, array)
    else:
        raise VideoWriteError(path, f"cannot write {suffix!r}; writable: {', '.join(WRITABLE_VIDEO_SUFFIXES)} "
                                    "or a folder (no suffix)")
    return path


def write_image(path: str | os.PathLike[str], image: np.ndarray) -> Path:
    """Write one picture as ``.png`` (lossless), ``.jpg``/``.jpeg`` or ``.npy``."""
    path = Path(path)
    try:
        array = to_rgb_uint8(image, where=str(path), image=True)
    except VideoReadError as exc:
        raise VideoWriteError(path, exc.reason) from None
    suffix = path.suffix.lower()
    path.parent.mkdir(parents=True, exist_ok=True)
    if suffix == ".npy":
        _arrays.save_array(path, array, None)
    elif suffix in (".png", ".jpg", ".jpeg"):
        atomic_write_bytes(path, _pyav.encode_image(array, suffix), durable=False)
    else:
        raise VideoWriteError(path, f"cannot write an image as {suffix!r}; use .png, .jpg or .npy")
    return path


def find_media(stem: Path, suffixes: tuple[str, ...] | None = None) -> list[Path]:
    """Existing files ``<stem><suffix>`` for every supported (or given) suffix, plus ``<stem>/`` if a folder."""
    wanted = suffixes or (VIDEO_SUFFIXES + IMAGE_SUFFIXES)
    found = [stem.with_name(stem.name + s) for s in wanted if stem.with_name(stem.name + s).is_file()]
    if stem.is_dir() and (suffixes is None or "" in suffixes or "/" in suffixes):
        found.append(stem)
    return found
