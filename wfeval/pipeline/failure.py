"""Clean failure: signals, storage errors and model set-up errors become one message and an exit code.

- SIGINT / SIGTERM raise :class:`RunInterrupted` (a ``KeyboardInterrupt``) in the main thread; the
  run records status ``interrupted`` and a ``run_interrupted`` event, ``python -m wfeval`` exits
  130 / 143 without a traceback, and the run folder can be resumed.
- An ``OSError`` of the run folder or the artifact store (disk full, permission denied, a path
  that is a file) is a :class:`StorageError`: exit 1, the path and the cause, status ``failed``;
  it is never recorded as a failure of the model.
- A model whose ``setup()`` raises is a :class:`ModelSetupError`: exit 1, status ``failed``.
- A stored input, reference or output found corrupt or missing while a model or a metric reads it,
  or a full disk under a metric, is a :class:`StorageError` too (:func:`storage_fault`): never a
  failed generation blamed on the model, never a metric error that quietly lowers a coverage.
- User code that ends the process (``sys.exit``) is a :class:`UserCodeExited`: exit 1, named.
"""

from __future__ import annotations

import contextlib
import errno
import signal
import threading
from typing import Any, Iterator


class RunInterrupted(KeyboardInterrupt):
    """SIGINT or SIGTERM arrived; ``exit_code`` is 128 + the signal number."""

    def __init__(self, signum: int):
        self.signum = int(signum)
        super().__init__(f"interrupted by {self.signal_name}")

    @property
    def signal_name(self) -> str:
        try:
            return signal.Signals(self.signum).name
        except ValueError:  # pragma: no cover
            return f"signal {self.signum}"

    @property
    def exit_code(self) -> int:
        return 128 + self.signum


def interruption(exc: BaseException) -> RunInterrupted:
    """The exception as a :class:`RunInterrupted` (a plain KeyboardInterrupt is a SIGINT)."""
    return exc if isinstance(exc, RunInterrupted) else RunInterrupted(signal.SIGINT)


@contextlib.contextmanager
def signals_raise() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM raise :class:`RunInterrupted` (main thread only)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        raise RunInterrupted(signum)

    previous = {s: signal.signal(s, handler) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


@contextlib.contextmanager
def signals_held() -> Iterator[None]:
    """Within the block, SIGINT and SIGTERM are ignored (recording why a run ended must finish)."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    previous = {s: signal.signal(s, signal.SIG_IGN) for s in (signal.SIGINT, signal.SIGTERM)}
    try:
        yield
    finally:
        for s, h in previous.items():
            signal.signal(s, h)


def run_end(exc: BaseException, run_dir: Any) -> tuple[str, dict, str, dict]:
    """(status, manifest fields, event kind, event fields) of a run that ended with ``exc``."""
    if isinstance(exc, KeyboardInterrupt):
        exc.run_dir = str(run_dir)  # type: ignore[attr-defined]  # the CLI's message names it
        stop = interruption(exc)
        return ("interrupted", {"error": str(stop), "signal": stop.signal_name}, "run_interrupted",
                {"signal": stop.signal_name, "resume": f"python -m wfeval.resume {run_dir}"})
    reason = describe_os_error(exc) if isinstance(exc, OSError) else f"{type(exc).__name__}: {exc}"
    fields: dict[str, Any] = {"error": reason}
    if isinstance(exc, (OSError, StorageError)):
        fields["failure_kind"] = "storage"
    elif isinstance(exc, ModelSetupError):
        fields["failure_kind"] = "model_setup"
    return "failed", fields, "run_failed", {"error": reason}


class CleanError(Exception):
    """A failure the user can act on: printed without a traceback; ``exit_code`` 1."""

    exit_code = 1


class ModelSetupError(CleanError):
    """The model's ``setup()`` raised before any sample was generated."""


class StorageError(CleanError):
    """Writing the run folder or the artifact store failed (disk full, permission, a file in the way)."""


_HINTS = {
    errno.ENOSPC: "the disk is full: free space or point run.store_dir / hydra.run.dir elsewhere",
    errno.EDQUOT: "the disk quota is exceeded",
    errno.EACCES: "permission denied: choose a folder you can write (run.store_dir, hydra.run.dir)",
    errno.EPERM: "operation not permitted: choose a folder you can write",
    errno.EROFS: "the file system is read-only: choose a writable folder",
    errno.ENOTDIR: "a file is in the way where a folder is needed",
    errno.EEXIST: "a file is in the way where a folder is needed",
    errno.EISDIR: "a folder is in the way where a file is needed",
    errno.ELOOP: "remove the link (a run folder copied from elsewhere may hold one), or choose another run folder",
}


def describe_os_error(exc: OSError) -> str:
    """``<path>: <cause> (<ERRNO>) — <what to do>``."""
    path = exc.filename if exc.filename is not None else "(unknown path)"
    cause = exc.strerror or str(exc) or type(exc).__name__
    code = errno.errorcode.get(exc.errno or 0)
    hint = _HINTS.get(exc.errno or -1)
    text = f"{path}: {cause}" + (f" ({code})" if code else "")
    if exc.filename2:
        text += f" [and {exc.filename2}]"
    return text + (f" — {hint}" if hint else "")


def storage_error(exc: OSError, what: str = "cannot write") -> StorageError:
    error = StorageError(f"{what} {describe_os_error(exc)}")
    error.errno = exc.errno  # type: ignore[attr-defined]
    return error


#: errno values that are never a model's or a metric's fault
STORAGE_ERRNOS = (errno.ENOSPC, errno.EDQUOT, errno.EROFS)


def storage_fault(exc: BaseException) -> StorageError | None:
    """The storage fault behind ``exc`` (anywhere in its chain), or None: a corrupt or missing object
    of the store (an :class:`~wfeval.storage.artifacts.ArtifactError` with ``store_object``), a full
    disk, a quota, a read-only file system. Such a failure is the store's, never the sample's."""
    from wfeval.storage.artifacts import ArtifactError

    seen: set[int] = set()
    while exc is not None and id(exc) not in seen:
        seen.add(id(exc))
        if isinstance(exc, StorageError):
            return exc
        if isinstance(exc, ArtifactError) and exc.store_object:
            error = StorageError(f"{exc.path}: a stored object is corrupt or missing ({exc}) — it is the store's "
                                 "fault, not the model's or the data's: run the same command again (inputs and "
                                 "references are put again from the benchmark, outputs regenerated), or choose "
                                 "another run.store_dir")
            error.path = str(exc.path)  # type: ignore[attr-defined]
            return error
        if isinstance(exc, OSError) and exc.errno in STORAGE_ERRNOS:
            return storage_error(exc)
        exc = exc.__cause__ or exc.__context__
    return None


class UserCodeExited(CleanError):
    """User code (a model, a policy, a metric) called ``sys.exit`` / raised ``SystemExit``: a run never
    ends because user code said so, and never with exit status 0."""


def user_exit(exc: SystemExit, who: str) -> UserCodeExited:
    return UserCodeExited(f"{who} ended the process (SystemExit({exc.code!r}), e.g. sys.exit) instead of returning "
                          "or raising; the run is stopped, nothing of it is counted: make it return its outputs, "
                          "or raise an exception to fail one sample")
