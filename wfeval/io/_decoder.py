"""The decoder of dataset files read in place (:class:`wfeval.storage.artifacts.FileDecoder` ``"wfeval.io"``).

A dataset's file is not copied into the artifact store: its ref names the file and these
options, and reading the ref decodes the file again (:func:`wfeval.storage.artifacts.read_array`).
``options["read"]`` is how: ``"video"`` (:func:`read_video`, ``check_complete``), ``"image"``
(:func:`read_image`), ``"first_frame"`` (frame 0 of what ``"video"`` reads, decoding only that
frame) or ``"array"`` (:func:`load_array`, as stored); ``options["limits"]`` are the
:class:`Limits` of the run that recorded the ref (those that differ from the defaults).
Registered with :mod:`wfeval.storage.artifacts` when :mod:`wfeval.io` is imported (and declared as the
``wfeval.decoders`` entry point ``wfeval.io`` for processes that have not imported it).
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import json
from pathlib import Path
from typing import Any, Mapping

import numpy as np

from wfeval.io._errors import VideoReadError
from wfeval.io._limits import DEFAULT_LIMITS, Limits
from wfeval.storage.artifacts import FileDecoder, register_decoder
from wfeval.utils.hashing import file_sha256

VERSION = "1"  # bump when what a file decodes to changes in this package's code
READS = ("video", "image", "first_frame", "array")


def options_for(read: str, *, check_complete: bool = True, limits: Limits | None = None) -> dict[str, Any]:
    """The options that make :func:`decode` read a file as ``read`` (one of :data:`READS`)."""
    if read not in READS:
        raise ValueError(f"read must be one of {', '.join(READS)}, got {read!r}")
    out: dict[str, Any] = {"read": read}
    if read == "video":
        out["check_complete"] = bool(check_complete)
    changed = {k: v for k, v in dataclasses.asdict(limits or DEFAULT_LIMITS).items() if v != getattr(DEFAULT_LIMITS, k)}
    if changed:  # only what differs from the defaults: refs stay small
        out["limits"] = changed
    return out


def decode(path: Path, options: Mapping[str, Any]) -> np.ndarray:
    """The array ``options`` say to make of ``path`` (VideoReadError naming the file when it cannot)."""
    path = Path(path)
    try:
        return _decode(path, options)
    except (VideoReadError, OSError):
        raise
    except Exception as exc:  # noqa: BLE001 - a library's own exception type: still this file's error
        raise VideoReadError(path, f"cannot be decoded ({type(exc).__name__}: {exc})") from None


def _decode(path: Path, options: Mapping[str, Any]) -> np.ndarray:
    from wfeval.io._api import load_array, read_image, read_video

    read = options.get("read")
    limits = Limits.from_mapping(options.get("limits"))
    if read == "video":
        return read_video(path, check_complete=bool(options.get("check_complete", True)), limits=limits).frames
    if read == "image":
        return read_image(path, limits=limits)
    if read == "first_frame":
        return read_video(path, max_frames=1, limits=limits).frames[0]
    if read == "array":
        return load_array(path, limits)[0]
    raise VideoReadError(path, f"unknown decoding {read!r} (expected one of {', '.join(READS)})")


def digest(path: Path) -> str:
    """The sha256 of what :func:`decode` reads: a file's bytes, or a frame folder's frame files (names
    and bytes, in reading order; other files of the folder do not count). OSError if unreadable."""
    path = Path(path)
    if not path.is_dir():
        return file_sha256(path)
    from wfeval.io._frames import frame_files

    listing = [[p.name, file_sha256(p)] for p in frame_files(path)]
    return hashlib.sha256(json.dumps({"frames": listing}).encode()).hexdigest()


@functools.lru_cache(maxsize=1)
def _versions() -> tuple[tuple[str, str | None], ...]:
    from importlib import metadata

    found = []
    for name in ("av", "numpy"):
        try:
            found.append((name, metadata.version(name)))
        except metadata.PackageNotFoundError:
            found.append((name, None))
    return tuple(found)


def versions() -> dict[str, str | None]:
    """The libraries whose versions decide the decoded pixels (PyAV's FFmpeg, numpy)."""
    return dict(_versions())


DECODER = FileDecoder(name="wfeval.io", version=VERSION, decode=decode, digest=digest, versions=versions)
register_decoder(DECODER)
