"""Writing files safely: atomically (readers see nothing or the whole file) and never through a link.

Every file wfeval writes goes through this module (``tests/test_architecture.py`` holds the rule
and its few exceptions): :func:`atomic_write_bytes` for a file written whole,
:func:`atomic_target` for a writer that needs a file name (a video muxer, a copy, a download),
:func:`open_nofollow` for a file appended to or streamed (logs, JSONL rows).

A run folder is data anyone could have written (a folder copied from elsewhere, a shared disk): a
symbolic link planted at ``<run>/events.jsonl`` or ``<run>/.wfeval.lock`` must not make wfeval
truncate or append to the file it points at. Every file of a run folder is opened with
``O_NOFOLLOW`` (:func:`open_nofollow`), or written by renaming a fresh file over the name (which
replaces a link instead of following it: :func:`atomic_write_bytes`); a link found where a file is
written raises ``OSError(ELOOP)``, which the run reports as a storage fault naming the path
(exit 1): remove the link or choose another run folder.
"""

from __future__ import annotations

import contextlib
import errno
import os
import tempfile
from pathlib import Path
from typing import IO, Any, Iterator

NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)


def refuse_link(path: Path) -> None:
    """Raise ``OSError(ELOOP)`` when ``path`` is a symbolic link (wfeval never writes through one)."""
    if os.path.islink(path):
        raise OSError(errno.ELOOP, "is a symbolic link; wfeval never writes through a link (it could change a "
                      "file outside the folder)", str(path))


def open_nofollow(path: Path, mode: str = "ab", *, perm: int = 0o644) -> IO[Any]:
    """``open(path, mode)`` that refuses a symbolic link at ``path`` (``OSError(ELOOP)``): modes
    ``ab``, ``wb``, ``a`` and ``w`` (text modes in UTF-8)."""
    flags = os.O_WRONLY | os.O_CREAT | NOFOLLOW | getattr(os, "O_CLOEXEC", 0)
    flags |= os.O_APPEND if mode.startswith("a") else os.O_TRUNC
    try:
        fd = os.open(path, flags, perm)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            refuse_link(Path(path))  # the clear message; a loop of links elsewhere in the path: as it was
        raise
    if "b" in mode:
        return os.fdopen(fd, mode)
    return os.fdopen(fd, mode, encoding="utf-8")


def atomic_write_bytes(path: Path, data: bytes, *, durable: bool = True) -> None:
    """Write ``data`` to ``path`` so that readers see either nothing or the whole file.

    The rename is atomic, which protects against a killed or crashed process (and replaces a link at
    ``path`` rather than writing through it). ``durable`` also flushes the file to disk first
    (fsync), which protects against a power loss too. The folder is created when it is missing
    (found so by the first attempt: no ``mkdir`` call for a folder that is there).
    """
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    except FileNotFoundError:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
            if durable:
                handle.flush()
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise



@contextlib.contextmanager
def atomic_target(path: Path, *, durable: bool = False) -> Iterator[Path]:
    """A fresh temporary path beside ``path`` for a writer that needs a file name; renamed over
    ``path`` when the block ends without an error (replacing a link there, never following it),
    removed otherwise. ``durable``: flushed to disk first."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    os.close(fd)
    tmp = Path(name)
    try:
        yield tmp
        if durable:
            with open(tmp, "rb+") as handle:
                os.fsync(handle.fileno())
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)
