"""The decoder of episode files read in place (:class:`wfeval.storage.artifacts.FileDecoder` ``"wfeval.episodes"``).

A sample of ``benchmark=lerobot``, ``hdf5`` or ``video_actions`` is a window of an episode; its
refs name the episode's file and where the window is in it, and reading a ref decodes that part
again and checks it against the recorded content (as a dataset folder's files are read).
``options["read"]``:

- ``"frames"``: frames ``start … stop-1`` of a video file, by decoding order;
- ``"times"``: the frames shown at ``times`` (seconds, within ``tolerance_s``): LeRobot v3, whose
  files hold several episodes one after another;
- ``"hdf5"``: rows ``start … stop-1`` of the dataset ``key`` of an HDF5 file (h5py).

``options["image"]``: the one frame of the part, as ``H×W×3`` (an initial frame). ``options["limits"]``:
the run's :class:`~wfeval.io.Limits` that differ from the defaults.

The digest of a file (the sha256 of its bytes) is remembered in this process by its path, size,
modification time and inode, so that the windows of one large file (an HDF5 file of every episode,
a LeRobot video of many) hash it once; every read still checks the decoded content.
"""

from __future__ import annotations

import dataclasses
import functools
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from wfeval.io import DEFAULT_LIMITS, Limits, VideoReadError, read_frame_range, read_frames_at
from wfeval.storage.artifacts import FileDecoder, register_decoder
from wfeval.utils.hashing import file_sha256

NAME = "wfeval.episodes"
VERSION = "1"
READS = ("frames", "times", "hdf5")


def options_for(read: str, *, limits: Limits | None = None, image: bool = False, **where: Any) -> dict[str, Any]:
    if read not in READS:
        raise ValueError(f"read must be one of {', '.join(READS)}, got {read!r}")
    out: dict[str, Any] = {"read": read, **where}
    if image:
        out["image"] = True
    changed = {k: v for k, v in dataclasses.asdict(limits or DEFAULT_LIMITS).items() if v != getattr(DEFAULT_LIMITS, k)}
    if changed:
        out["limits"] = changed
    return out


def read_hdf5_rows(path: Path, key: str, start: int, stop: int, limits: Limits | None = None) -> np.ndarray:
    """Rows ``start … stop-1`` of the dataset ``key`` (VideoReadError naming the file and the key)."""
    import h5py

    limits = limits or DEFAULT_LIMITS
    try:
        with h5py.File(path, "r") as handle:
            if key not in handle:
                raise VideoReadError(path, f"no dataset {key!r} in the HDF5 file")
            data = handle[key]
            if not isinstance(data, h5py.Dataset):
                raise VideoReadError(path, f"{key!r} is a group, not a dataset")
            if data.ndim < 1 or stop > data.shape[0] or not 0 <= start < stop:
                raise VideoReadError(path, f"{key!r} has shape {tuple(data.shape)}; rows {start}..{stop - 1} asked")
            nbytes = (stop - start) * int(np.prod(data.shape[1:], dtype=np.int64)) * data.dtype.itemsize
            if nbytes > limits.max_array_bytes:
                raise VideoReadError(path, f"{key!r}[{start}:{stop}] is {nbytes:,} bytes, over the limit of "
                                           f"{limits.max_array_bytes:,} (raise it with "
                                           f"benchmark.limits.max_array_bytes={nbytes} if it is right)")
            return np.asarray(data[start:stop])
    except VideoReadError:
        raise
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise VideoReadError(path, f"not a readable HDF5 file or dataset {key!r} ({type(exc).__name__}: {exc})") \
            from exc


def decode(path: Path, options: Mapping[str, Any]) -> np.ndarray:
    path = Path(path)
    read = options.get("read")
    limits = Limits.from_mapping(options.get("limits"))
    if read == "frames":
        array = read_frame_range(path, int(options["start"]), int(options["stop"]), limits=limits)
    elif read == "times":
        array = read_frames_at(path, list(options["times"]), tolerance_s=float(options.get("tolerance_s", 1e-4)),
                               limits=limits)
    elif read == "hdf5":
        array = read_hdf5_rows(path, str(options["key"]), int(options["start"]), int(options["stop"]), limits)
        if array.dtype != np.uint8 or array.ndim != 4 or array.shape[-1] != 3:
            raise VideoReadError(path, f"{options['key']!r}: frames must be uint8 T×H×W×3 RGB, found "
                                       f"{array.dtype} {tuple(array.shape)}")
    else:
        raise VideoReadError(path, f"unknown decoding {read!r} (expected one of {', '.join(READS)})")
    return array[0] if options.get("image") else array


def digest(path: Path) -> str:
    """The sha256 of the file's bytes (remembered for this process while the file is unchanged)."""
    return file_sha256(path, cached=True)


@functools.lru_cache(maxsize=1)
def _versions() -> tuple[tuple[str, str | None], ...]:
    from importlib import metadata

    found = []
    for name in ("av", "numpy", "h5py"):
        try:
            found.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            found.append((name, None))
    return tuple(found)


def versions() -> dict[str, str | None]:
    return dict(_versions())


DECODER = FileDecoder(name=NAME, version=VERSION, decode=decode, digest=digest, versions=versions)
register_decoder(DECODER)
