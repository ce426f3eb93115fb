"""The user's programs as child processes: each runs in its own session, so that it and everything it
started can be stopped together (``os.killpg``); every wait on one is bounded, and what it wrote is
read within a size limit."""

from __future__ import annotations

import os
import signal
import subprocess
from pathlib import Path

WAIT_AFTER_KILL_S = 5.0  # how long a killed program may take to go


def kill_group(proc: subprocess.Popen) -> None:
    """Stop the program and everything it started (it runs in its own session)."""
    if proc.poll() is not None:
        return
    try:
        if hasattr(os, "killpg"):
            os.killpg(proc.pid, signal.SIGTERM)
        else:  # pragma: no cover - Windows
            proc.terminate()
        proc.wait(timeout=2)
    except (subprocess.TimeoutExpired, ProcessLookupError, PermissionError):
        try:
            if hasattr(os, "killpg"):
                os.killpg(proc.pid, signal.SIGKILL)
            else:  # pragma: no cover
                proc.kill()
        except (ProcessLookupError, PermissionError):
            pass
        try:  # never an unbounded wait (a process stuck in the kernel cannot be killed at once)
            proc.wait(timeout=WAIT_AFTER_KILL_S)
        except subprocess.TimeoutExpired:
            pass


def read_tail(path: Path, limit: int) -> str:
    """The last ``limit`` bytes of a file a user program wrote (a log of any size: only the tail is read)."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            handle.seek(max(0, handle.tell() - max(0, int(limit))))
            return handle.read().decode("utf-8", errors="replace")
    except OSError:
        return ""


def read_head(path: Path, limit: int) -> str:
    """The first ``limit`` bytes of a file a user program wrote (a message of any size: only its head)."""
    with open(path, "rb") as handle:
        return handle.read(max(0, int(limit))).decode("utf-8", errors="replace")
