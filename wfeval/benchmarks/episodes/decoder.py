"""The decoder of episode files read in place (:class:`wfeval.storage.artifacts.FileDecoder` ``"wfeval.episodes"``).

A sample of ``benchmark=lerobot``, ``hdf5`` or ``video_actions`` is a window of an episode; its
refs name the episode's file and where the window is in it, and reading a ref decodes that part
again and checks it against the recorded content (as a dataset folder's files are read).
``options["read"]``:

- ``"frames"``: frames ``start … stop-1`` of a video file, by decoding order;
- ``"times"``: the frames shown at ``times`` (seconds, within ``tolerance_s``): LeRobot v3, whose
  files hold several episodes one after another;
- ``"hdf5"``: rows ``start … stop-1`` of the dataset ``key`` of an HDF5 file (h5py), read from the
  files :mod:`.hdf5_files` lists (``files``: their recorded sha256, checked on each read);
  ``encoded``: each row is one encoded image (Minari's JPEG frames);
- ``"parquet_images"``: the images of ``rows`` of the image column ``column`` of a parquet file
  (LeRobot image features).

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

from wfeval.io import DEFAULT_LIMITS, Limits, VideoReadError, check_video, read_frame_range, read_frames_at
from wfeval.storage.artifacts import FileDecoder, register_decoder
from wfeval.utils.hashing import file_sha256

NAME = "wfeval.episodes"
VERSION = "2"  # 2: HDF5 rows read from the files hdf5_files.resolve lists, checked by their sha256
READS = ("frames", "times", "hdf5", "parquet_images")


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


def read_hdf5_rows(path: Path, key: str, start: int, stop: int, limits: Limits | None = None,
                   files: Any = None, encoded: bool = False) -> np.ndarray:
    """Rows ``start … stop-1`` of the dataset ``key`` (VideoReadError naming the file and the key),
    read from exactly the files :func:`.hdf5_files.resolve` lists; ``files``: the ``[kind, path,
    sha256]`` recorded for them, checked before reading."""
    import h5py

    from wfeval.benchmarks.episodes import hdf5_files

    limits = limits or DEFAULT_LIMITS
    try:
        resolved = hdf5_files.resolve(path, key)
        now = hdf5_files.digests(resolved, digest)
        if files is not None and [list(f) for f in files] != now:
            changed = [f"{k} {p}" for k, p, s in now if [k, p, s] not in [list(f) for f in files]] or ["a file"]
            raise VideoReadError(path, f"{key!r} reads {', '.join(changed)}, which changed (or was added) since the "
                                       "sample was recorded")
        with h5py.File(resolved.file, "r") as handle:
            if resolved.key not in handle or not isinstance(handle[resolved.key], h5py.Dataset):
                raise VideoReadError(path, f"no dataset {key!r} in the HDF5 file")
            data = hdf5_files.open_dataset(handle, resolved.key)
            if data.ndim < 1 or stop > data.shape[0] or not 0 <= start < stop:
                raise VideoReadError(path, f"{key!r} has shape {tuple(data.shape)}; rows {start}..{stop - 1} asked")
            if not encoded:  # encoded frames: each is checked before it is decoded
                check_rows(path, key, data.shape, data.dtype.itemsize, limits, start, stop)
            elif stop - start > limits.max_frames:
                check_video(path, stop - start, 1, 1, limits)
            return np.asarray(data[start:stop])
    except VideoReadError:
        raise
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise VideoReadError(path, f"not a readable HDF5 file or dataset {key!r} ({type(exc).__name__}: {exc})") \
            from exc


def check_rows(path: Path, key: str, shape: tuple[int, ...], itemsize: int, limits: Limits, start: int = 0,
               stop: int | None = None) -> None:
    """``limits`` applied to rows ``start … stop-1`` of an array of ``shape`` before anything is read:
    bytes (``max_array_bytes``), frames and pixels when the rows are images."""
    from wfeval.io import check_array_header

    stop = shape[0] if stop is None else stop
    try:
        check_array_header(path, (max(stop - start, 0), *shape[1:]), itemsize, limits)
        if len(shape) == 4:
            check_video(path, max(stop - start, 0), int(shape[1]), int(shape[2]), limits)
    except VideoReadError as exc:
        raise VideoReadError(path, f"{key!r}: {exc.reason}") from None


def decode(path: Path, options: Mapping[str, Any]) -> np.ndarray:
    """The part of ``path`` that ``options`` name; any failure is a VideoReadError naming the file (a
    library's own exception type included: a file that cannot be decoded is its sample's input error)."""
    path = Path(path)
    try:
        return _decode(path, options)
    except (VideoReadError, OSError):
        raise
    except Exception as exc:  # noqa: BLE001 - Pillow, h5py, pyarrow and PyAV raise their own types
        raise VideoReadError(path, f"cannot be decoded ({type(exc).__name__}: {exc})") from None


def _decode(path: Path, options: Mapping[str, Any]) -> np.ndarray:
    read = options.get("read")
    limits = Limits.from_mapping(options.get("limits"))
    if read == "frames":
        array = read_frame_range(path, int(options["start"]), int(options["stop"]), limits=limits)
    elif read == "times":
        array = read_frames_at(path, list(options["times"]), tolerance_s=float(options.get("tolerance_s", 1e-4)),
                               limits=limits)
    elif read == "parquet_images":
        from wfeval.benchmarks.episodes.images import read_parquet_images

        array = read_parquet_images(path, str(options["column"]), [int(r) for r in options["rows"]], limits)
    elif read == "hdf5":
        array = read_hdf5_rows(path, str(options["key"]), int(options["start"]), int(options["stop"]), limits,
                               options.get("files"), encoded=bool(options.get("encoded")))
        if options.get("encoded"):
            from wfeval.benchmarks.episodes.images import decode_images

            array = decode_images(list(array), path, f"{options['key']!r}", limits)
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
