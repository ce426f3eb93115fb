"""One process per run folder: ``<run>/.wfeval.lock`` names its holder (pid, host, start time).

The lock is an advisory ``flock`` on that file, so a holder that died (even by SIGKILL) releases
it with its last file descriptor: a stale lock is taken over without a question. A second live
process gets :class:`RunLocked` (exit 2) naming the holder.
"""

from __future__ import annotations

import contextlib
import errno
import json
import os
import platform
from pathlib import Path
from typing import Iterator

from wfeval.config.errors import ConfigError
from wfeval.storage.rundir import FILES

LOCK_NAME = FILES.lock


class RunLocked(ConfigError):
    """Another live process holds the run folder."""


def holder(path: Path) -> dict:
    try:
        return json.loads(path.read_text(encoding="utf-8") or "{}")
    except (OSError, ValueError):
        return {}


@contextlib.contextmanager
def run_lock(run_dir: Path) -> Iterator[Path]:
    """Hold ``run_dir``'s lock within the block; :class:`RunLocked` if another process holds it."""
    path = Path(run_dir) / LOCK_NAME
    try:
        import fcntl
    except ImportError:  # pragma: no cover - not POSIX: no lock
        yield path
        return
    from wfeval.storage.safe_io import NOFOLLOW, refuse_link

    try:  # never through a link: `.wfeval.lock -> ~/victim` must not truncate the victim
        fd = os.open(path, os.O_RDWR | os.O_CREAT | NOFOLLOW, 0o644)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            refuse_link(path)
        raise
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            info = holder(path)
            who = f"pid {info.get('pid', '?')} on host {info.get('host', '?')}"
            since = f" since {info['started_at']}" if info.get("started_at") else ""
            raise RunLocked(f"{run_dir} is in use by another wfeval process ({who}{since}); one process per run "
                            f"folder: wait for it to finish, or stop it (kill {info.get('pid', '<pid>')}) "
                            "and resume") from None
        from wfeval.storage.rundir import utc_now

        os.ftruncate(fd, 0)
        os.write(fd, json.dumps({"pid": os.getpid(), "host": platform.node(), "started_at": utc_now()}).encode())
        try:
            yield path
        finally:
            with contextlib.suppress(OSError):
                os.ftruncate(fd, 0)
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)
