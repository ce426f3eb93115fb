"""The tests' warm Python (tests/warm_python.py) runs a command as a fresh interpreter would: the same
output, exit status, argv, folder, environment and path, threads joined and atexit run at the end; and
it runs in a fresh interpreter whenever the environment asks a preloaded library for something else."""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from tests import warm_python
from tests.conftest import ROOT

PROBE = textwrap.dedent("""
    import atexit, os, sys, threading, time
    print("preloaded", "torch" in sys.modules)
    print("argv", sys.argv[1:], "cwd", os.getcwd(), "path0", sys.path[0])
    print("env", os.environ.get("PROBE_VALUE"), "main", __name__)
    print("late", os.environ.get("MUJOCO_GL"), os.environ.get("TORCHINDUCTOR_CACHE_DIR"),
          any(m in sys.modules for m in ("mujoco", "OpenGL", "dm_control", "glfw", "torch._dynamo")))
    print("to stderr", file=sys.stderr)
    def late():
        time.sleep(0.2)
        print("thread joined", flush=True)
    threading.Thread(target=late).start()
    atexit.register(lambda: print("atexit ran", flush=True))
    code = os.environ.get("PROBE_EXIT", "0")
    if code == "raise":
        raise ValueError("probe failed")
    if code == "kill":
        os.kill(os.getpid(), 9)
    sys.exit(int(code) if code.isdigit() else code)
""")


@pytest.fixture
def probe(tmp_path):
    package = tmp_path / "lib"
    package.mkdir()
    (package / "probe.py").write_text(PROBE)
    script = tmp_path / "probe_script.py"
    script.write_text(PROBE)
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(PYTHONPATH=str(package), PROBE_VALUE="seen")
    return tmp_path, env


def _cold(argv, cwd, env):
    return subprocess.run([sys.executable, *argv], cwd=cwd, env=env, capture_output=True, text=True, timeout=60)


@pytest.mark.parametrize("form", ["module", "script"])
@pytest.mark.parametrize("exit_as", ["0", "3", "a message", "raise"])
def test_a_warm_command_ends_exactly_as_a_fresh_interpreter(probe, form, exit_as):
    folder, env = probe
    env["PROBE_EXIT"] = exit_as
    argv = ["-m", "probe", "x", "--y"] if form == "module" else ["probe_script.py", "x", "--y"]
    warm, cold = warm_python.run(argv, folder, env, timeout=60), _cold(argv, folder, env)
    assert warm.stdout.splitlines()[0] == "preloaded True" and cold.stdout.splitlines()[0] == "preloaded False"
    assert warm.stdout.splitlines()[1:] == cold.stdout.splitlines()[1:]
    assert warm.stderr == cold.stderr  # a traceback too: the same frames
    assert warm.returncode == cold.returncode == {"0": 0, "3": 3, "a message": 1, "raise": 1}[exit_as]
    assert "thread joined" in warm.stdout and warm.stdout.rstrip().endswith("atexit ran")
    assert f"argv ['x', '--y'] cwd {folder} path0 {folder}" in warm.stdout
    assert "env seen main __main__" in warm.stdout


def test_a_command_killed_by_a_signal_reports_it_as_subprocess_does(probe):
    folder, env = probe
    env["PROBE_EXIT"] = "kill"
    assert warm_python.run(["-m", "probe"], folder, env, timeout=60).returncode == -9


@pytest.mark.parametrize("change", [{"OMP_NUM_THREADS": "3"}, {"PYTHONHASHSEED": "7"}, {"LD_PRELOAD": ""}])
def test_an_environment_a_preloaded_library_reads_gets_a_fresh_interpreter(probe, change):
    folder, env = probe
    env.update(change)
    result = warm_python.run(["-m", "probe"], folder, env, timeout=60)
    assert result.returncode == 0 and result.stdout.startswith("preloaded False"), result.stdout


@pytest.mark.parametrize("name", ["MUJOCO_GL", "TORCHINDUCTOR_CACHE_DIR"])
@pytest.mark.parametrize("value", ["/x", None])
def test_a_variable_only_an_unloaded_library_reads_reaches_the_command_which_stays_warm(probe, name, value):
    """Memory Maze's renderer sets MUJOCO_GL, and torch TORCHINDUCTOR_CACHE_DIR (when torch._dynamo is first
    imported), in a test process: its later commands differ from the server there, and still run warm."""
    folder, env = probe
    for late in ("MUJOCO_GL", "TORCHINDUCTOR_CACHE_DIR"):
        env.pop(late, None)
    if value:
        env[name] = value
    result = warm_python.run(["-m", "probe"], folder, env, timeout=60)
    seen = {"MUJOCO_GL": None, "TORCHINDUCTOR_CACHE_DIR": None, name: value}
    assert result.stdout.startswith("preloaded True") and \
        f"late {seen['MUJOCO_GL']} {seen['TORCHINDUCTOR_CACHE_DIR']} False" in result.stdout, result.stdout


def test_a_command_after_threadpoolctl_was_imported_in_the_test_process_stays_warm(probe):
    """threadpoolctl sets KMP_DUPLICATE_LIB_OK when imported (wfeval imports it to score FVD in-process):
    tests/conftest.py imports it before any server starts, so the environment stays the server's."""
    folder, _ = probe
    warm_python.address()
    import threadpoolctl  # noqa: F401

    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST_")}
    env.update(PYTHONPATH=str(folder / "lib"))
    assert os.environ.get("KMP_DUPLICATE_LIB_OK") == "True"
    result = warm_python.run(["-m", "probe"], folder, env, timeout=60)
    assert result.stdout.startswith("preloaded True"), result.stdout


@pytest.mark.parametrize("package", ["yaml", "wfeval"])
def test_a_preloaded_package_shadowed_by_the_commands_path_gets_a_fresh_interpreter(probe, package):
    folder, env = probe
    (folder / "lib" / package).mkdir()
    (folder / "lib" / package / "__init__.py").write_text("SHADOW = True\n")
    result = warm_python.run(["-m", "probe"], folder, env, timeout=60)
    assert result.stdout.startswith("preloaded False"), result.stdout


def test_the_checkout_on_the_path_is_the_preloaded_wfeval_and_stays_warm(probe):
    folder, env = probe
    env["PYTHONPATH"] += os.pathsep + str(ROOT)
    result = warm_python.run(["-m", "probe"], ROOT, env, timeout=60)
    assert result.stdout.startswith("preloaded True"), result.stdout


def test_a_command_past_its_timeout_is_killed_and_raises(tmp_path):
    (tmp_path / "sleeper.py").write_text("import time\nprint('started', flush=True)\ntime.sleep(60)\n")
    start = time.perf_counter()
    with pytest.raises(subprocess.TimeoutExpired) as caught:
        warm_python.run(["sleeper.py"], tmp_path, dict(os.environ), timeout=1)
    assert time.perf_counter() - start < 10
    assert caught.value.output == b"started\n"


def test_a_shell_commands_python_runs_warm_with_its_pipes_and_exit_status(probe):
    folder, env = probe
    env["PROBE_EXIT"] = "4"
    shell = warm_python.shim_env(env)
    piped = subprocess.run(["bash", "-c", "python -m probe | tr a-z A-Z; echo status ${PIPESTATUS[0]}"], cwd=folder,
                           env=shell, capture_output=True, text=True, timeout=60)
    assert piped.stdout.splitlines()[0] == "PRELOADED TRUE" and piped.stdout.rstrip().endswith("status 4")
    assert piped.stderr == "to stderr\n"
    other = subprocess.run(["bash", "-c", "python -c 'import sys; print(\"torch\" in sys.modules, sys.argv)' a"],
                           cwd=folder, env=shell, capture_output=True, text=True, timeout=60)
    assert other.stdout == "False ['-c', 'a']\n"  # not a module or a script: the real interpreter, as called


def test_turned_off_every_command_gets_a_fresh_interpreter(probe, monkeypatch):
    folder, env = probe
    monkeypatch.setenv("WFEVAL_TEST_WARM", "0")
    assert warm_python.run(["-m", "probe"], folder, env, timeout=60).stdout.startswith("preloaded False")
    assert warm_python.shim_env(env) == env


def test_a_server_that_died_is_started_again_and_one_out_of_reach_leaves_the_command_to_a_fresh_one(probe, monkeypatch):
    folder, env = probe
    warm_python.address()
    warm_python._server["proc"].kill()
    warm_python._server["proc"].wait()
    assert warm_python.run(["-m", "probe"], folder, env, timeout=60).stdout.startswith("preloaded True")
    unreachable = folder / "gone.sock"
    (folder / "gone.sock.ready").write_text(Path(warm_python.address() + ".ready").read_text())
    monkeypatch.setattr(warm_python, "address", lambda: str(unreachable))
    result = warm_python.run(["-m", "probe"], folder, env, timeout=60)
    assert result.returncode == 0 and result.stdout.startswith("preloaded False"), result.stdout
