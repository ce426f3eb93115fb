"""A warm Python that runs ``python -m wfeval... ARGS`` lines as forks of itself.

The documented commands are ~160 lines of ``python -m wfeval...``; a fresh interpreter for each paid
its start and its imports (torch, numpy, Hydra, wfeval's CLI and pipeline) before the command did
anything: ~3 of the ~4 CPU seconds of a two-sample gridworld run. This server imports those once,
then forks one child per line: the child is a process of its own (its folder, its environment, its
own threads and exit, nothing left behind for the next line), started as ``python -m MODULE ARGS``
starts: ``sys.argv`` and ``sys.path[0]`` as ``-m`` sets them, the module run as ``__main__`` by
:func:`runpy.run_module`, stdout and stderr into one file, the exit status an interpreter gives
(SystemExit's code; 1 after printing an uncaught exception) after its shutdown (non-daemon threads
joined, ``atexit`` run, streams flushed; the modules are not torn down: that would copy most of the
server's memory into every child). The server runs with the commands' environment, so a library
that reads a variable when it is imported (thread counts) has read what a fresh interpreter would.

Protocol (one JSON object a line): the client writes ``{"argv", "cwd", "env", "output", "timeout"}``
on stdin, the server answers ``{"returncode", "cpu_seconds"}`` (a signal's death as bash reports it:
128 + the signal; 124 when ``timeout`` seconds passed: the child's process group is killed; the CPU
the child and what it waited for used) and stops at EOF.
"""

from __future__ import annotations

import atexit
import importlib
import json
import os
import runpy
import select
import signal
import sys
import threading
import time
import traceback

#: what a run imports (torch: the metrics' and the learned models'; a run's config plugin, its default
#: metrics, its artifact store and the report it writes at the end: ~0.3 CPU s a command when each fork
#: imported them); importing them starts no thread, prints nothing, and what they read from the
#: environment at import is the commands' own
PRELOAD = ("numpy", "numpy.ma", "numpy.random", "torch", "PIL.Image", "yaml", "omegaconf", "hydra", "hydra.compose",
           "hydra.utils", "hydra.core.override_parser.overrides_parser", "hydra.experimental.callback",
           "hydra_plugins.wfeval_configs", "jinja2", "wfeval.cli.command", "wfeval.cli.run",
           "wfeval.pipeline.runner", "wfeval.pipeline.build", "wfeval.config.derive",
           "wfeval.benchmarks.gridworld.adapter", "wfeval.benchmarks.recorded.simulator",
           "wfeval.functional.reference", "wfeval.functional.control", "wfeval.io", "wfeval.report.html.page",
           "wfeval.report.html.load", "wfeval.report.html.media", "wfeval.report.votes")


def _exited(pid: int, deadline: float) -> bool:
    """Whether the child has exited by ``deadline`` (it is not reaped here): a pidfd to wait on, or, where
    there is none (an older kernel, a seccomp filter refusing ``pidfd_open``), ``waitid`` polled."""
    try:
        handle = os.pidfd_open(pid)
    except (AttributeError, OSError):
        while time.monotonic() < deadline:
            if os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None:
                return True
            time.sleep(0.02)
        return os.waitid(os.P_PID, pid, os.WEXITED | os.WNOHANG | os.WNOWAIT) is not None
    try:
        return bool(select.select([handle], [], [], max(0.0, deadline - time.monotonic()))[0])
    finally:
        os.close(handle)


def _wait(pid: int, timeout: float) -> tuple[int, float]:
    """The child's exit status as bash reports it (124: killed after ``timeout`` seconds) and the CPU
    seconds (user + system) it and the programs it waited for used."""
    timed_out = not _exited(pid, time.monotonic() + timeout)
    if timed_out:
        try:
            os.killpg(pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
    _, status, usage = os.wait4(pid, 0)
    code = os.waitstatus_to_exitcode(status)
    return (124 if timed_out else 128 - code if code < 0 else code), usage.ru_utime + usage.ru_stime


def serve() -> dict | None:
    """Answer requests until EOF (None); in a forked child, the request it is to run."""
    for name in PRELOAD:
        importlib.import_module(name)
    answers = os.fdopen(os.dup(1), "w")
    for line in sys.stdin:
        request = json.loads(line)
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            answers.close()
            return request
        code, cpu = _wait(pid, request["timeout"])
        answers.write(json.dumps({"returncode": code, "cpu_seconds": cpu}) + "\n")
        answers.flush()
    return None


def become(request: dict) -> None:
    """In the child: turn into ``python -m MODULE ARGS`` in the request's folder and environment."""
    os.setpgid(0, 0)  # its own process group: a timeout kills the programs it started too
    signal.signal(signal.SIGINT, signal.default_int_handler)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    os.close(null)
    output = os.open(request["output"], os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644)
    os.dup2(output, 1)
    os.dup2(output, 2)
    os.close(output)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    module, *args = request["argv"]
    sys.path[0] = os.getcwd()  # what -m puts first
    sys.argv = [module, *args]  # runpy sets argv[0] to the module's file
    runpy.run_module(module, run_name="__main__", alter_sys=True)


def exit_as_python(run) -> None:
    """``run()``, then the interpreter's own exit without tearing its modules down: the status of
    SystemExit (None: 0, an int: itself, anything else printed on stderr: 1) or 1 after printing an
    uncaught exception; non-daemon threads joined, ``atexit`` run, the streams flushed."""
    try:
        run()
        code = 0
    except SystemExit as exc:
        code = exc.code if isinstance(exc.code, int) or exc.code is None else 1
        if not (isinstance(exc.code, int) or exc.code is None):
            print(exc.code, file=sys.stderr)
    except BaseException:  # noqa: BLE001 - what the interpreter does with an uncaught exception
        traceback.print_exc()
        code = 1
    threading._shutdown()
    atexit._run_exitfuncs()
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            pass
    os._exit(code or 0)


if __name__ == "__main__":
    todo = serve()
    if todo is not None:
        exit_as_python(lambda: become(todo))
