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
duration, :func:`hydra_raises`), so that this table, not Hydra, decides.
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

#: the user's own ``HYDRA_FULL_ERROR``, read before :func:`hydra_raises` sets it for Hydra
USER_FULL_ERROR = os.environ.get("HYDRA_FULL_ERROR")


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
    if USER_FULL_ERROR == "1":
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
    setting is restored after (and seen by the job: :data:`USER_FULL_ERROR`)."""
    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        yield
    finally:
        if USER_FULL_ERROR is None:
            os.environ.pop("HYDRA_FULL_ERROR", None)
        else:
            os.environ["HYDRA_FULL_ERROR"] = USER_FULL_ERROR


@contextlib.contextmanager
def exits(prog: str = "wfeval") -> Iterator[None]:
    """Run a command's body: an exception of the table exits with its status and message."""
    try:
        yield
    except BaseException as exc:  # noqa: BLE001 - SystemExit passes through below
        if isinstance(exc, SystemExit):
            raise
        known = exit_for(exc, prog)
        if known is None:
            raise
        print(known.message, file=sys.stderr)
        sys.exit(known.status)
