"""A command is a function: ``main(argv: list[str] | None = None) -> int``, callable in-process.

:func:`command` makes a command's body into that function. The body raises what ends it; the status
comes from one table (:func:`wfeval.cli.exits.status_of`: a config error 2 with its message, argparse's
and Hydra's own ``SystemExit`` as the interpreter would end with them); a bug is raised to the caller.
Nothing calls ``sys.exit`` but the ``__main__`` shims (``sys.exit(main())``).

The process belongs to the caller (a test, a notebook, a program calling several commands), so
whatever a command changes of it is put back when it returns (:func:`callers_process`): ``sys.argv``
(the command's own while it runs, as ``python -m`` sets it: the run records it), ``sys.path``, the working folder, the
environment (``WFEVAL_TRUST`` of ``resume --trust``, the variables libraries set as they load), the
logging Hydra configures for each job (its handlers, one writing into the run folder, are closed),
torch's thread count, and Hydra's global state (``GlobalHydra`` and ``HydraConfig``, cleared as
Hydra's own test utilities clear them). What stays: glibc's allocator thresholds a run raises
(:mod:`wfeval.utils.allocator`; glibc cannot read them back), OpenMP's passive wait policy where the
command first imported torch (:mod:`wfeval.utils.openmp`; the runtime reads it once, as it loads) and
the caches of what a process has already parsed or loaded.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import sys
from typing import Any, Callable, Iterator, Protocol, Sequence


class Main(Protocol):
    """A command: ``main(argv=None) -> int``."""

    def __call__(self, argv: Sequence[str] | None = None) -> int: ...


def command(prog: str) -> Callable[[Callable[[list[str]], int | None]], Main]:
    """``body(argv) -> status | None`` made into the command's ``main(argv=None) -> int`` (``argv``:
    the arguments after the program name; None: this process's own, ``sys.argv[1:]``)."""
    def wrap(body: Callable[[list[str]], int | None]) -> Main:
        @functools.wraps(body)
        def main(argv: Sequence[str] | None = None) -> int:
            from wfeval.cli.exits import status_of

            args = list(sys.argv[1:] if argv is None else map(str, argv))
            with callers_process(list(sys.argv) if argv is None else [program_file(prog), *args]):
                try:
                    status = body(args)
                except BaseException as exc:  # noqa: BLE001 - the table decides; a bug is raised again
                    return status_of(exc, prog)
                return 0 if status is None else int(status)
        return main
    return wrap


def program_file(module: str) -> str:
    """``sys.argv[0]`` as ``python -m MODULE`` sets it: the file it runs (a package's ``__main__``); the
    run records it and the report shows the command from it."""
    from importlib.util import find_spec

    spec = find_spec(module)
    if spec is not None and spec.submodule_search_locations is not None:
        spec = find_spec(f"{module}.__main__")
    return spec.origin if spec is not None and spec.origin else module


@contextlib.contextmanager
def callers_process(argv: list[str]) -> Iterator[None]:
    """The block runs with ``sys.argv = argv``; the process is the caller's again after it."""
    saved_argv, saved_path, cwd, environ = sys.argv, list(sys.path), os.getcwd(), dict(os.environ)
    threads = _torch_threads()
    hydra = _hydra_state()
    with _callers_logging():
        sys.argv = argv
        try:
            yield
        finally:
            sys.argv = saved_argv
            sys.path[:] = saved_path
            if os.getcwd() != cwd:
                os.chdir(cwd)
            if dict(os.environ) != environ:
                os.environ.clear()
                os.environ.update(environ)
            if threads is not None and _torch_threads() != threads:
                sys.modules["torch"].set_num_threads(threads)
            _restore_hydra(hydra)


def _torch_threads() -> int | None:
    torch = sys.modules.get("torch")
    return torch.get_num_threads() if torch is not None and hasattr(torch, "get_num_threads") else None


def _hydra_state() -> tuple[bool, Any] | None:
    """(whether ``GlobalHydra`` was initialized, ``HydraConfig``'s config) when Hydra is loaded."""
    if "hydra.core.global_hydra" not in sys.modules:
        return None
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig

    return GlobalHydra.instance().is_initialized(), HydraConfig.instance().cfg


def _restore_hydra(before: tuple[bool, Any] | None) -> None:
    if "hydra.core.global_hydra" not in sys.modules:
        return
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig

    initialized, hydra_cfg = before if before is not None else (False, None)
    if not initialized:
        GlobalHydra.instance().clear()
    HydraConfig.instance().cfg = hydra_cfg


@contextlib.contextmanager
def _callers_logging() -> Iterator[None]:
    """Hydra configures the root logger for itself and again for each job (a console handler and a
    file handler in the job's folder): after the block every logger has its level, handlers and switches
    again, and the handlers made meanwhile are closed."""
    manager = logging.Logger.manager

    def loggers() -> dict[str, logging.Logger]:
        found = {name: lg for name, lg in list(manager.loggerDict.items()) if isinstance(lg, logging.Logger)}
        return {"": logging.getLogger(), **found}

    state = {name: (lg.level, list(lg.handlers), lg.propagate, lg.disabled) for name, lg in loggers().items()}
    kept = {h for _, handlers, _, _ in state.values() for h in handlers}
    disabled = manager.disable
    try:
        yield
    finally:
        for name, lg in loggers().items():
            made = [h for h in lg.handlers if h not in kept]
            for handler in made:
                lg.removeHandler(handler)
                with contextlib.suppress(Exception):
                    handler.close()
            if name in state:
                level, handlers, lg.propagate, lg.disabled = state[name]
                lg.handlers[:] = handlers
                lg.setLevel(level)  # also forgets the levels the loggers below it had looked up
        logging.disable(disabled)
