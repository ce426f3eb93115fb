"""``.npy`` and ``.npz`` files: arrays as they are (no pickle), fps from an ``fps`` entry of a ``.npz``."""

from __future__ import annotations

import io
import zipfile
from pathlib import Path

import numpy as np

from wfeval.io._errors import VideoReadError
from wfeval.io._limits import DEFAULT_LIMITS, Limits, check_array_header
from wfeval.storage.safe_io import atomic_write_bytes

NPZ_KEYS = ("video", "frames", "image", "arr_0")


def _header(handle) -> tuple[tuple[int, ...], np.dtype]:
    """(shape, dtype) from a ``.npy`` header, without reading the data."""
    version = np.lib.format.read_magic(handle)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(handle)
    elif version == (2, 0):
        shape, _, dtype = np.lib.format.read_array_header_2_0(handle)
    else:
        shape, _, dtype = np.lib.format._read_array_header(handle, version)  # noqa: SLF001 - version 3.0
    return tuple(int(d) for d in shape), np.dtype(dtype)


def check_headers(path: Path, limits: Limits) -> None:
    """Refuse (VideoReadError) an array whose header declares more than ``limits`` allow."""
    if path.suffix.lower() == ".npz":
        with zipfile.ZipFile(path) as archive:
            for info in archive.infolist():
                if info.filename.endswith(".npy"):
                    with archive.open(info) as member:
                        shape, dtype = _header(member)
                    check_array_header(path, shape, dtype.itemsize, limits)
        return
    with path.open("rb") as handle:
        shape, dtype = _header(handle)
    check_array_header(path, shape, dtype.itemsize, limits)


def load_array(path: Path, limits: Limits | None = None) -> tuple[np.ndarray, float | None]:
    """The array of a ``.npy``, or the video of a ``.npz`` (key ``video``/``frames``/``image`` or its only array)."""
    try:
        if path.stat().st_size == 0:
            raise VideoReadError(path, "empty file (0 bytes)")
        check_headers(path, limits or DEFAULT_LIMITS)
        if path.suffix.lower() == ".npz":
            return _from_npz(path, path.read_bytes())
        return np.load(path, allow_pickle=False), None
    except VideoReadError:
        raise
    except (ValueError, OSError, EOFError, zipfile.BadZipFile) as exc:
        kind = "a readable .npz archive" if path.suffix.lower() == ".npz" else "a readable .npy array"
        raise VideoReadError(path, f"not {kind} (corrupt or truncated): {type(exc).__name__}: {exc}") from exc


def _from_npz(path: Path, data: bytes) -> tuple[np.ndarray, float | None]:
    with np.load(io.BytesIO(data), allow_pickle=False) as archive:
        names = list(archive.files)
        arrays = [n for n in names if n != "fps"]
        key = next((k for k in NPZ_KEYS if k in arrays), arrays[0] if len(arrays) == 1 else None)
        if key is None:
            raise VideoReadError(path, f"cannot tell which array is the video among {names}; "
                                       f"name it one of {', '.join(NPZ_KEYS[:3])}")
        fps = float(archive["fps"]) if "fps" in names else None
        return archive[key], fps


def save_array(path: Path, array: np.ndarray, fps: float | None) -> None:
    """Write ``.npy`` (array only) or compressed ``.npz`` (``video`` + ``fps``) atomically."""
    buffer = io.BytesIO()
    if path.suffix.lower() == ".npz":
        extra = {"fps": np.asarray(float(fps))} if fps else {}
        np.savez_compressed(buffer, video=array, **extra)
    else:
        np.save(buffer, array, allow_pickle=False)
    atomic_write_bytes(path, buffer.getvalue(), durable=False)
