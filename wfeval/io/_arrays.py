"""``.npy`` and ``.npz`` files: arrays as they are (no pickle), fps from an ``fps`` entry of a ``.npz``."""

from __future__ import annotations

import io
import os
import zipfile
from pathlib import Path

import numpy as np

from wfeval.io._errors import VideoReadError

NPZ_KEYS = ("video", "frames", "image", "arr_0")


def load_array(path: Path) -> tuple[np.ndarray, float | None]:
    """The array of a ``.npy``, or the video of a ``.npz`` (key ``video``/``frames``/``image`` or its only array)."""
    try:
        if path.stat().st_size == 0:
            raise VideoReadError(path, "empty file (0 bytes)")
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
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        tmp.write_bytes(buffer.getvalue())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
