"""The tests' commands, called in the test's process: ``python -m wfeval.<verb> ARGS`` is the verb's
``main(ARGS) -> int`` (wfeval.cli.command), run as a fresh interpreter would run it and seen as
:mod:`subprocess` shows a process: its exit status, and everything written to stdout and stderr (print,
logging, warnings, a traceback, the programs it starts) captured.

What a fresh ``python -m`` would have, the call gets for its duration and the test's process has
again after it: the command's environment (``env``), working folder, ``sys.path`` (the folder and
``PYTHONPATH`` first; modules imported from them are forgotten after), logging as a new process has it
(no handlers: a warning reaches stderr) and Python's own warning filters. What a command itself changes
of the process, its ``main`` puts back (wfeval.cli.command). A library reads some variables only when
it is imported (thread counts, GL's): a test that sets those runs ``sys.executable`` in the
``subprocess`` tier instead.
"""

from __future__ import annotations

import contextlib
import importlib
import io
import logging
import os
import subprocess
import sys
import tempfile
import traceback
import warnings
from pathlib import Path
from typing import Callable, Iterator

def command_main(argv: list[str]) -> Callable[[list[str]], int] | None:
    """The ``main`` that ``python -m MODULE`` runs, for a module of wfeval (None: not a wfeval command)."""
    if len(argv) < 2 or argv[0] != "-m" or argv[1].split(".")[0] != "wfeval":
        return None
    module = importlib.import_module(argv[1])
    if hasattr(module, "__path__"):  # a package: python -m runs its __main__
        module = importlib.import_module(f"{argv[1]}.__main__")
    return getattr(module, "main", None)


def in_process(main: Callable[[list[str]], int], argv: list[str], cwd: Path,
               env: dict) -> subprocess.CompletedProcess:
    """``python ARGV`` in ``cwd`` with ``env``, called as ``main(ARGV[2:])`` in this process."""
    with _output() as output, _as_fresh_python(cwd, env):
        try:
            code = main(argv[2:])
        except BaseException as exc:  # noqa: BLE001 - what the interpreter does with an uncaught exception
            traceback.print_exception(type(exc), exc, exc.__traceback__)
            code = 1
    return subprocess.CompletedProcess([sys.executable, *argv], code, output["stdout"], output["stderr"])


@contextlib.contextmanager
def _output() -> Iterator[dict[str, str]]:
    """stdout and stderr, Python's and the file descriptors' (a program the command starts), into files;
    the dict the block yields holds their text after it."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        for stream in (sys.stdout, sys.stderr):
            stream.flush()
        saved = sys.stdout, sys.stderr, os.dup(1), os.dup(2)
        os.dup2(out.fileno(), 1)
        os.dup2(err.fileno(), 2)
        sys.stdout, sys.stderr = _text(1), _text(2)
        output: dict[str, str] = {}
        try:
            yield output
        finally:
            sys.stdout, sys.stderr = saved[0], saved[1]
            os.dup2(saved[2], 1)
            os.dup2(saved[3], 2)
            os.close(saved[2])
            os.close(saved[3])
            output.update(stdout=_read(out), stderr=_read(err))


def _text(fd: int) -> io.TextIOWrapper:
    return io.TextIOWrapper(io.FileIO(fd, "w", closefd=False), encoding="utf-8", errors="backslashreplace",
                            write_through=True)


def _read(file) -> str:
    file.seek(0)
    return file.read().decode("utf-8", errors="replace")


@contextlib.contextmanager
def _as_fresh_python(cwd: Path, env: dict) -> Iterator[None]:
    saved_env, saved_cwd, saved_path, modules = dict(os.environ), os.getcwd(), list(sys.path), set(sys.modules)
    added = [str(Path(cwd, p).resolve()) for p in [".", *env.get("PYTHONPATH", "").split(os.pathsep)] if p]
    added = [p for p in dict.fromkeys(added) if p not in sys.path]
    root = logging.getLogger()
    root_state = root.level, list(root.handlers)
    os.environ.clear()
    os.environ.update(env)
    os.chdir(cwd)
    sys.path[:0] = added
    importlib.invalidate_caches()
    root.handlers[:] = []  # a new process's logging: a warning without handlers reaches stderr
    root.setLevel(logging.WARNING)
    try:
        with warnings.catch_warnings():
            _fresh_warning_filters()
            yield
    finally:
        root.handlers[:] = root_state[1]
        root.setLevel(root_state[0])
        sys.path[:] = saved_path
        os.chdir(saved_cwd)
        os.environ.clear()
        os.environ.update(saved_env)
        for name in set(sys.modules) - modules:  # a test's own module of the same name is read afresh
            file = getattr(sys.modules[name], "__file__", None) or ""
            if any(file.startswith(folder + os.sep) for folder in added):
                del sys.modules[name]


def _fresh_warning_filters() -> None:
    """Python's own filters (not pytest's, which records warnings instead of showing them)."""
    warnings.resetwarnings()
    for category in (ResourceWarning, ImportWarning, PendingDeprecationWarning, DeprecationWarning):
        warnings.simplefilter("ignore", category)
    warnings.filterwarnings("default", category=DeprecationWarning, module="__main__")
    warnings.showwarning = warnings._showwarning_orig
