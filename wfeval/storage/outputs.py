"""Where a command may write: never over a run's own files (one check, used by every writer of outputs).

A command's output path (``report --out``, ``export --out``, ``compare --out``, ``replay --out``,
``merge --out``, ``export_dataset OUT``) is the user's to choose, and a typo or a copied command
line can name another run's ``results.json``. :func:`refuse_run_files` raises
:class:`OutputRefused` when a path would replace a file a run wrote about itself — what
:data:`RUN_OWN_FILES` names, and ``.hydra/`` — of any run folder (a folder holding a
``manifest.json``) at or above it; a folder output may not be a run folder either (unless the caller
says which run folders it may replace: ``merge`` its own earlier merge). Derived files beside them
(``report.html``, ``replay/``, a leaderboard) stay writable. :func:`write_output` checks, then
writes atomically through :mod:`wfeval.storage.safe_io`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Callable

from wfeval.storage.rundir import FILES
from wfeval.storage.safe_io import atomic_write_bytes

RUN_OWN_FILES = frozenset({FILES.manifest, FILES.events, FILES.steps, FILES.generations, FILES.samples,
                           FILES.metrics, FILES.results, FILES.results_md, FILES.lock, FILES.hydra})


class OutputRefused(ValueError):
    """An output path that would overwrite a run's own files; the message names the run and the path."""


def is_run_folder(folder: Path) -> bool:
    """A folder a run wrote (it holds a ``manifest.json``)."""
    return (folder / FILES.manifest).is_file()


def _absolute(path: Path) -> Path:
    """``path`` made absolute with its folder's links resolved (a link at ``path`` itself is not followed)."""
    path = Path(os.path.abspath(Path(path).expanduser()))
    return path.parent.resolve() / path.name


def refuse_run_files(path: str | Path, *, folder: bool = False,
                     may_replace: Callable[[Path], bool] | None = None) -> None:
    """Raise :class:`OutputRefused` when writing ``path`` (a file; with ``folder``, a folder the
    command fills) would overwrite a run's own files."""
    target = _absolute(Path(path))
    if folder and is_run_folder(target) and not (may_replace and may_replace(target)):
        raise OutputRefused(f"{path} is the run folder of a run ({target / FILES.manifest} is there); wfeval "
                            "never overwrites a run's files: choose another output folder")
    for ancestor in target.parents:
        if is_run_folder(ancestor):
            first = target.relative_to(ancestor).parts[0]
            if first in RUN_OWN_FILES and not (may_replace and may_replace(ancestor)):
                raise OutputRefused(f"{path} is {first} of the run {ancestor}; wfeval never overwrites a run's "
                                    "own files: choose another output path")
            return


def write_output(path: str | Path, data: str | bytes) -> Path:
    """Write an output file (a table, a report) after :func:`refuse_run_files`; atomically, never
    through a link. Returns the path."""
    path = Path(path)
    refuse_run_files(path)
    atomic_write_bytes(path, data.encode("utf-8") if isinstance(data, str) else data, durable=False)
    return path
