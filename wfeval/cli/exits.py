"""How a command ends: one table from exception to exit status and message (docs/reliability.md).

| exception | status | printed |
| --- | --- | --- |
| SIGINT / SIGTERM (:class:`~wfeval.pipeline.failure.RunInterrupted`) | 130 / 143 | the signal and, when a run folder holds what finished, the resume command |
| :class:`~wfeval.pipeline.failure.CleanError` (storage, model set-up) | 1 | the path or the model and the cause |
| :class:`~wfeval.pipeline.generate.GenerationStopped` (``run.fail_on_error``) | 1 | why the run stopped |
| a config error (:func:`wfeval.config.errors.friendly_message` knows it) | 2 | one paragraph naming the key |
| any other ``OSError`` (e.g. Hydra could not create the run folder) | 1 | the path, the cause, what to do |
| anything else | — | the traceback (a bug) |

``HYDRA_FULL_ERROR=1`` (the user's setting) shows the traceback of every failure but an interruption.
While a command runs, Hydra is told to raise instead of printing (``HYDRA_FULL_ERROR=1`` for the
duration, :func:`hydra_raises`), so that this table, not Hydra, decides. A command is a function
(:mod:`wfeval.cli.command`): :func:`status_of` turns what its body raised into the status it returns.
"""

from __future__ import annotations

import contextlib
import os
import sys
import traceback
from dataclasses import dataclass
from typing import Iterator

from wfeval.config.errors import friendly_message
from wfeval.pipeline.failure import CleanError, describe_os_error, interruption

#: the user's own ``HYDRA_FULL_ERROR`` of each :func:`hydra_raises` block now running (innermost last)
_USER_FULL_ERROR: list[str | None] = []


def user_full_error() -> bool:
    """Whether the user asked for tracebacks (``HYDRA_FULL_ERROR=1``), read when the command runs: inside
    :func:`hydra_raises` the value the user had before it, not the one it set for Hydra."""
    return (_USER_FULL_ERROR[-1] if _USER_FULL_ERROR else os.environ.get("HYDRA_FULL_ERROR")) == "1"


@dataclass(frozen=True)
class Exit:
    status: int
    message: str


def exit_for(exc: BaseException, prog: str = "wfeval") -> Exit | None:
    """The status and message for ``exc``; None when it is a bug (show the traceback)."""
    from wfeval.pipeline.generate import GenerationStopped

    if isinstance(exc, KeyboardInterrupt):
        stop = interruption(exc)
        run_dir = getattr(exc, "run_dir", None)
        where = (f"; {run_dir} keeps what finished (status 'interrupted'): python -m wfeval.resume {run_dir}"
                 if run_dir else "")
        return Exit(stop.exit_code, f"{prog}: {stop}{where}")
    if user_full_error():
        return None
    if isinstance(exc, CleanError):
        return Exit(exc.exit_code, f"{prog}: {exc}")
    if isinstance(exc, GenerationStopped):  # the run's own failure policy: a result, not a bug
        return Exit(1, f"Run stopped: {exc}\n(manifest.json records it; finished samples stay cached)")
    message = friendly_message(exc)
    if message is not None:
        return Exit(2, message)
    if isinstance(exc, OSError):
        return Exit(1, f"{prog}: storage error: {describe_os_error(exc)}")
    return None


def describe(exc: BaseException) -> str:
    """One job's failure as a sweep prints it: the table's message, else the traceback."""
    known = exit_for(exc) if not isinstance(exc, KeyboardInterrupt) else None
    return known.message if known else "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))


@contextlib.contextmanager
def hydra_raises() -> Iterator[None]:
    """Within the block Hydra raises errors instead of printing them and exiting 1; the user's
    setting is restored after (and seen by the job: :func:`user_full_error`)."""
    user = os.environ.get("HYDRA_FULL_ERROR")
    _USER_FULL_ERROR.append(user)
    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        yield
    finally:
        _USER_FULL_ERROR.pop()
        if user is None:
            os.environ.pop("HYDRA_FULL_ERROR", None)
        else:
            os.environ["HYDRA_FULL_ERROR"] = user


def status_of(exc: BaseException, prog: str = "wfeval") -> int:
    """The exit status a command returns for what its body raised, its message printed to stderr: a
    ``SystemExit`` (argparse, Hydra's own exits, a sweep's failed jobs) as the interpreter would end
    with it, an exception of the table with its status; anything else (a bug) is raised again."""
    if isinstance(exc, SystemExit):
        if exc.code is None or isinstance(exc.code, int):
            return (exc.code or 0) & 0xFF
        print(exc.code, file=sys.stderr)
        return 1
    known = exit_for(exc, prog)
    if known is None:
        raise exc
    print(known.message, file=sys.stderr)
    return known.status


@contextlib.contextmanager
def exits(prog: str = "wfeval") -> Iterator[None]:
    """A block that ends its command: an exception of the table becomes a ``SystemExit`` with its
    status, after its message (what :mod:`wfeval.cli.command` returns as the command's status)."""
    try:
        yield
    except BaseException as exc:  # noqa: BLE001 - SystemExit passes through below
        if isinstance(exc, SystemExit):
            raise
        raise SystemExit(status_of(exc, prog)) from None
