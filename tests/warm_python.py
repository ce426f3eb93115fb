"""A warm Python for the tests' commands: ``python -m wfeval ...`` without paying the interpreter's
start-up (torch, Hydra, numpy: ~2 s of CPU) in every one of the suite's hundreds of commands.

One server per test process imports the heavy libraries once and then runs nothing: each command is
a fork of it that takes the command's own stdin/stdout/stderr (passed over a Unix socket), working
folder, environment and ``sys.argv``, runs the module or script as ``python`` would (``runpy``: the
same ``__main__``, ``sys.path[0]``, ``PYTHONPATH`` entries), ends as the interpreter ends (non-daemon
threads joined, ``atexit`` run, streams flushed) and reports its exit status; a command killed by a
signal reports ``-signum`` as :mod:`subprocess` does. The command is still a process of its own: its
Hydra singletons, logging, working folder, environment and thread counts are its own, and the test's
process is untouched.

What a warm command cannot do is re-read what the preloaded libraries read when they were imported.
So a command runs in a fresh interpreter instead (``os.execv`` of the real one, nothing else changes)
when it is not ``python -m MODULE ...`` or ``python SCRIPT.py ...``, when its environment differs from
the server's in a variable a library reads at import (``SENSITIVE``: thread counts, ``PYTHON*``
except ``PYTHONPATH``, allocators), or when its ``PYTHONPATH`` or working folder holds another copy
of a preloaded package. The libraries in ``NOT_PRELOADED`` are never imported by the server (it refuses
to start with one), so the variables only they read reach the command's own import of them like any
other variable: GL's (``MUJOCO_GL``, ``PYOPENGL_PLATFORM``, EGL's, ``DISPLAY``: not in ``SENSITIVE``) and
torch's compiler's (``TORCHINDUCTOR_*``, ``TORCHDYNAMO_*``: ``NOT_SENSITIVE`` takes them out of its
``TORCH`` prefix). A test process sets some of them itself (Memory Maze's renderer when it draws
in-process; torch ``TORCHINDUCTOR_CACHE_DIR`` when building an optimizer imports ``torch._dynamo``),
and its later commands stay warm. Tests that are about the interpreter itself (start-up time, signals
sent to the process, import laziness) run ``sys.executable`` directly, as before.

``WFEVAL_TEST_WARM=0`` turns it off: every command then runs in a fresh interpreter.
"""

from __future__ import annotations

import atexit
import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
import threading
from pathlib import Path

#: imported once by the server: what every ``python -m wfeval`` run imports anyway (wfeval's own
#: modules too: none reads the environment at import; a command whose path holds another copy of wfeval
#: or of a library below runs in a fresh interpreter)
PRELOAD = ("numpy", "torch", "yaml", "omegaconf", "hydra", "hydra.core.override_parser.overrides_parser",
           "hydra._internal.config_loader_impl", "hydra._internal.utils", "scipy.stats", "jinja2", "PIL.Image",
           "wfeval.cli.run", "wfeval.cli.boundary", "wfeval.config.derive", "wfeval.pipeline.runner",
           "wfeval.metrics.base", "wfeval.benchmarks.gridworld.adapter")
#: called once by the server after PRELOAD: per-process caches of package data every run fills the
#: same way (the report page's compiled template), so each command does not build them again
WARM_UP = (("wfeval.report.html", "page_template"),)
#: the top-level packages PRELOAD brings in, which a command's own path could shadow
PACKAGES = ("numpy", "torch", "yaml", "omegaconf", "hydra", "scipy", "jinja2", "PIL", "wfeval")
#: environment variables read when a preloaded library is imported (or by the interpreter at start-up):
#: a command whose value differs from the server's runs in a fresh interpreter
SENSITIVE = ("PYTHON", "OMP_", "MKL_", "OPENBLAS_", "KMP_", "GOMP_", "BLIS_", "VECLIB_", "NUMEXPR_", "TORCH",
             "PYTORCH", "CUDA", "NVIDIA_", "LD_", "MALLOC", "LANG", "LC_")
#: the libraries the server never imports, and the variables of the TORCH prefix only they read
NOT_PRELOADED = ("mujoco", "OpenGL", "dm_control", "glfw", "torch._dynamo", "torch._inductor")
NOT_SENSITIVE = ("TORCHINDUCTOR_", "TORCHDYNAMO_")
HERE = Path(__file__).resolve().parent
SHIM_DIR = HERE / "warm_bin"  # holds `python`: the shim a shell command finds first on PATH
THIS_FILE = __file__
SOCKET_VAR = "WFEVAL_TEST_WARM_SOCKET"
REAL_VAR = "WFEVAL_TEST_REAL_PYTHON"


def _sensitive(env: dict) -> dict:
    return {k: v for k, v in env.items()
            if k.startswith(SENSITIVE) and not k.startswith(NOT_SENSITIVE) and k != "PYTHONPATH"}


# --- the server ------------------------------------------------------------------------------------

def serve(address: str) -> None:  # pragma: no cover - runs in its own process
    import importlib
    import select
    import signal

    for name in PRELOAD:
        importlib.import_module(name)
    for module, function in WARM_UP:
        getattr(importlib.import_module(module), function)()
    if loaded := [name for name in NOT_PRELOADED if name in sys.modules]:
        raise SystemExit(f"the warm server imported {loaded}: their variables would have to be sensitive")
    base_path = [p for p in sys.path[1:] if p not in os.environ.get("PYTHONPATH", "").split(os.pathsep)]
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET)
    listener.bind(address)
    listener.listen(64)
    wake_r, wake_w = os.pipe()
    os.set_blocking(wake_w, False)
    signal.signal(signal.SIGCHLD, lambda *_: None)
    signal.set_wakeup_fd(wake_w, warn_on_full_buffer=False)
    packages = {name: os.path.realpath(os.path.dirname(sys.modules[name].__file__)) for name in PACKAGES}
    Path(address + ".ready").write_text(json.dumps({"env": _sensitive(dict(os.environ)), "packages": packages}))
    waiting: dict[int, socket.socket] = {}
    while True:
        ready, _, _ = select.select([listener, wake_r, sys.stdin], [], [])
        if sys.stdin in ready and not os.read(sys.stdin.fileno(), 1):  # the test process is gone
            for pid in waiting:
                _kill(pid)
            return
        if wake_r in ready:
            os.read(wake_r, 4096)
        if listener in ready:
            conn, _ = listener.accept()
            try:
                message, fds, _, _ = socket.recv_fds(conn, 1 << 20, 3)
                request = json.loads(message)
            except (OSError, ValueError):  # a client gone before its request: nothing to run
                conn.close()
                continue
            sys.stdout.flush()
            sys.stderr.flush()
            pid = os.fork()
            if pid == 0:
                try:
                    listener.close()
                    conn.close()
                    os.close(wake_r)
                    os.close(wake_w)
                    signal.set_wakeup_fd(-1)
                    signal.signal(signal.SIGCHLD, signal.SIG_DFL)
                    _child(request, fds, base_path)
                finally:  # the fork never returns to the server's loop, whatever went wrong before its command
                    os._exit(70)
            for fd in fds:
                os.close(fd)
            try:
                conn.send(json.dumps({"pid": pid}).encode())
            except OSError:  # the client is gone: so is the command's reason to run
                _kill(pid)
            waiting[pid] = conn
        while waiting:
            try:
                pid, status = os.waitpid(-1, os.WNOHANG)
            except ChildProcessError:
                break
            if pid == 0:
                break
            conn = waiting.pop(pid, None)
            if conn is not None:
                try:
                    conn.send(json.dumps({"returncode": os.waitstatus_to_exitcode(status)}).encode())
                except OSError:
                    pass
                conn.close()


def _kill(pid: int) -> None:
    try:
        os.kill(pid, 9)
    except OSError:
        pass


def _child(request: dict, fds: list[int], base_path: list[str]) -> None:  # pragma: no cover - a fork
    """Become the command: its streams, folder, environment and argv; run it; exit as Python exits."""
    import atexit
    import importlib
    import runpy

    for target, fd in enumerate(fds):
        os.dup2(fd, target)
    for fd in fds:
        if fd > 2:
            os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    argv = request["argv"]
    sys.orig_argv = [sys.executable, *argv]
    extra = [os.path.abspath(p) for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
    sys.modules["__main__"] = _fresh_main()  # the server's own __main__ is this file: not the command's
    code = 0
    try:
        if argv[0] == "-m":
            sys.argv = ["-m", *argv[2:]]
            sys.path[:] = [os.getcwd(), *extra, *base_path]
            importlib.invalidate_caches()
            runpy._run_module_as_main(argv[1])  # what `python -m` calls (its traceback frames too)
        else:
            sys.argv = list(argv)
            sys.path[:] = [os.path.dirname(os.path.realpath(argv[0])), *extra, *base_path]
            importlib.invalidate_caches()
            _run_script(os.path.abspath(argv[0]))
    except SystemExit as exc:
        code = _exit_code(exc.code)
    except BaseException as exc:  # noqa: BLE001 - what the interpreter does with an uncaught exception
        trimmed = exc.__traceback__  # the traceback as the interpreter prints it: without this file's frames
        while trimmed is not None and trimmed.tb_frame.f_code.co_filename == THIS_FILE:
            trimmed = trimmed.tb_next
        sys.excepthook(type(exc), exc.with_traceback(trimmed), trimmed)
        code = 1
    try:
        threading._shutdown()  # the interpreter waits for non-daemon threads before atexit
        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001
        sys.excepthook(*sys.exc_info())
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except Exception:  # noqa: BLE001
            pass
    os._exit(code)


def _fresh_main():
    """An empty ``__main__``, as the interpreter starts with."""
    import builtins
    import types

    main = types.ModuleType("__main__")
    main.__dict__.update(__builtins__=builtins, __spec__=None, __loader__=None)
    return main


def _run_script(path: str) -> None:
    """``python PATH``: the file compiled and run as ``__main__`` (its ``__file__`` absolute, no spec)."""
    from importlib.machinery import SourceFileLoader

    main = sys.modules["__main__"]
    main.__dict__.update(__file__=path, __cached__=None, __loader__=SourceFileLoader("__main__", path))
    with open(path, "rb") as source:
        code = compile(source.read(), path, "exec")
    exec(code, main.__dict__)


def _exit_code(code) -> int:
    if code is None:
        return 0
    if isinstance(code, int):
        return code & 0xFF
    print(code, file=sys.stderr)
    return 1


# --- the client ------------------------------------------------------------------------------------

_server: dict = {}
_lock = threading.Lock()


def enabled() -> bool:
    return os.environ.get("WFEVAL_TEST_WARM", "1") != "0"


def address() -> str | None:
    """The socket of this test process's warm server, started on first use (None: turned off)."""
    if not enabled():
        return None
    with _lock:
        if _server.get("pid") != os.getpid() or _server["proc"].poll() is not None:  # none yet, or it died
            folder = tempfile.mkdtemp(prefix="wfeval-warm-")
            path = os.path.join(folder, "python.sock")
            env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTEST_", "COV_"))}
            env.pop("PYTHONPATH", None)
            proc = subprocess.Popen([sys.executable, str(Path(__file__)), path], stdin=subprocess.PIPE,
                                    env=env, cwd=folder, stdout=subprocess.DEVNULL)
            _server.update(pid=os.getpid(), proc=proc, path=path)
            atexit.register(_stop, proc, folder)
        path, proc = _server["path"], _server["proc"]
    ready = Path(path + ".ready")
    while not ready.is_file():
        if proc.poll() is not None:
            raise RuntimeError(f"the tests' warm Python exited {proc.returncode} before it was ready")
        threading.Event().wait(0.02)
    return path


def _stop(proc: subprocess.Popen, folder: str) -> None:
    proc.stdin.close()  # the server ends when its stdin does
    try:
        proc.wait(10)
    except subprocess.TimeoutExpired:
        proc.kill()
    shutil.rmtree(folder, ignore_errors=True)


def warm_argv(argv: list[str], cwd: str, env: dict, server: dict) -> bool:
    """Whether ``python ARGV`` in ``cwd`` with ``env`` can run as a fork of the warm server (``server``:
    what it wrote when ready: its import-time environment and where its packages are)."""
    if not argv or _sensitive(env) != server["env"]:
        return False
    if argv[0] == "-m":
        if len(argv) < 2 or not all(part.isidentifier() for part in argv[1].split(".")):
            return False
        first = cwd
    elif argv[0].endswith(".py") and not argv[0].startswith("-"):
        first = os.path.dirname(os.path.realpath(os.path.join(cwd, argv[0])))
    else:
        return False
    for entry in [first, *[p for p in env.get("PYTHONPATH", "").split(os.pathsep) if p]]:
        entry = os.path.join(cwd, entry)
        for name, loaded in server["packages"].items():
            found = os.path.join(entry, name)
            if os.path.exists(found + ".py") or os.path.isdir(found) and os.path.realpath(found) != loaded:
                return False
    return True


def server_state(path: str) -> dict:
    return json.loads(Path(path + ".ready").read_text())


class Unavailable(RuntimeError):
    """The warm server could not be reached: the command did not start (run it in a fresh interpreter)."""


def run_warm(path: str, argv: list[str], cwd: str, env: dict, fds: tuple[int, int, int],
             timeout: float | None = None) -> int:
    """Run ``python ARGV`` as a fork of the server at ``path`` with the given stdin/stdout/stderr fds;
    its exit status (``-signum`` when a signal ended it). A timeout kills it and raises TimeoutError."""
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as conn:
        try:
            conn.connect(path)
        except OSError as exc:  # no server there: nothing ran
            raise Unavailable(str(exc)) from exc
        message = json.dumps({"argv": list(argv), "cwd": str(cwd), "env": dict(env)}).encode()
        socket.send_fds(conn, [message], list(fds))
        pid = json.loads(conn.recv(4096))["pid"]
        conn.settimeout(timeout)
        try:
            reply = conn.recv(4096)
        except (TimeoutError, socket.timeout):
            _kill(pid)
            raise TimeoutError(f"python {' '.join(argv)} ran past {timeout} s") from None
        except BaseException:
            _kill(pid)
            raise
    if not reply:
        raise RuntimeError("the tests' warm Python went away during a command")
    return json.loads(reply)["returncode"]


def run(argv: list[str], cwd, env: dict, timeout: float | None = None, stdin=None) -> subprocess.CompletedProcess:
    """``subprocess.run([sys.executable, *argv], cwd=, env=, capture_output=True, text=True, timeout=)``,
    warm when the command allows it."""
    def cold():
        return subprocess.run([sys.executable, *argv], cwd=cwd, env=env, capture_output=True, text=True,
                              timeout=timeout, stdin=stdin)

    path = address()
    if path is None or not warm_argv(list(argv), str(cwd), env, server_state(path)):
        return cold()
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err, open(os.devnull, "rb") as nothing:
        source = nothing.fileno() if stdin in (None, subprocess.DEVNULL) else stdin.fileno()
        try:
            code = run_warm(path, list(argv), str(cwd), env, (source, out.fileno(), err.fileno()), timeout)
        except Unavailable:
            return cold()
        except TimeoutError:
            out.seek(0)
            err.seek(0)
            raise subprocess.TimeoutExpired([sys.executable, *argv], timeout, out.read(), err.read()) from None
        out.seek(0)
        err.seek(0)
        return subprocess.CompletedProcess([sys.executable, *argv], code, out.read().decode(errors="replace"),
                                           err.read().decode(errors="replace"))


def shim_env(env: dict) -> dict:
    """``env`` with the shim's folder first on PATH: a shell command's ``python`` runs warm (the real
    interpreter is the one after it)."""
    path = address()
    if path is None:
        return env
    return {**env, "PATH": os.pathsep.join([str(SHIM_DIR), env.get("PATH", "")]), SOCKET_VAR: path,
            REAL_VAR: sys.executable}


def shim_main() -> None:  # pragma: no cover - the shim's process (tests/warm_bin/python)
    """``python ARGV`` from a shell: warm when it can, else the real interpreter, exactly as called."""
    import signal

    argv, real = sys.argv[1:], os.environ[REAL_VAR]
    path = os.environ.get(SOCKET_VAR)
    env = {k: v for k, v in os.environ.items() if k not in (SOCKET_VAR, REAL_VAR)}
    env["PATH"] = os.pathsep.join(p for p in env.get("PATH", "").split(os.pathsep) if p != str(SHIM_DIR))
    if not path or not os.path.exists(path + ".ready") or not warm_argv(argv, os.getcwd(), env, server_state(path)):
        os.execve(real, [real, *argv], env)
    with socket.socket(socket.AF_UNIX, socket.SOCK_SEQPACKET) as conn:
        try:
            conn.connect(path)
        except OSError:  # the server is gone: the real interpreter, as called
            os.execve(real, [real, *argv], env)
        socket.send_fds(conn, [json.dumps({"argv": argv, "cwd": os.getcwd(), "env": env}).encode()], [0, 1, 2])
        pid = json.loads(conn.recv(4096))["pid"]
        for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):  # passed on to the command
            signal.signal(signum, lambda s, _f: os.kill(pid, s))
        reply = conn.recv(4096)
    code = json.loads(reply)["returncode"] if reply else 1
    sys.exit(128 - code if code < 0 else code)


if __name__ == "__main__":  # pragma: no cover
    if len(sys.argv) == 2 and sys.argv[1].endswith(".sock"):
        serve(sys.argv[1])
    else:
        shim_main()
