"""The documented commands' warm interpreter (tests/docs/_warm_python.py) gives each command what a
fresh ``python -m`` gives it: its folder, environment, argv and output, its exit status, its shutdown,
a timeout that kills what it started, and nothing left over from the command before."""

from __future__ import annotations

import os
import textwrap
import time

import pytest

from tests.docs._doc_commands import WarmPythons, forkable, user_env


@pytest.fixture(scope="module")
def warm(tmp_path_factory):
    env = {**user_env(tmp_path_factory.mktemp("store")), "WARM_TEST": "from the request"}
    runner = WarmPythons(env)
    yield runner, env
    runner.close()


def _module(folder, name: str, body: str) -> None:
    (folder / f"{name}.py").write_text(textwrap.dedent(body), encoding="utf-8")


def test_a_command_gets_its_folder_environment_argv_and_status_and_all_its_output_is_kept(warm, tmp_path):
    runner, env = warm
    _module(tmp_path, "shows", """
        import os, subprocess, sys
        print("argv", sys.argv[1:], "cwd", os.getcwd(), "env", os.environ["WARM_TEST"], "path0", sys.path[0])
        print("to stderr", file=sys.stderr)
        subprocess.run(["echo", "from a program it started"], check=True)
        sys.exit(3)
    """)
    code, output = runner.run(["shows", "a b", "c"], tmp_path, env, timeout=60)
    assert code == 3
    assert f"argv ['a b', 'c'] cwd {tmp_path} env from the request path0 {tmp_path}" in output
    assert "to stderr" in output and "from a program it started" in output


def test_an_uncaught_exception_exits_1_after_threads_and_atexit_as_an_interpreter_does(warm, tmp_path):
    runner, env = warm
    _module(tmp_path, "fails", """
        import atexit, threading, time
        atexit.register(lambda: print("atexit ran", flush=True))
        threading.Thread(target=lambda: (time.sleep(0.3), print("thread finished", flush=True))).start()
        raise ValueError("boom")
    """)
    code, output = runner.run(["fails"], tmp_path, env, timeout=60)
    assert code == 1
    assert "ValueError: boom" in output and "Traceback" in output
    assert output.index("thread finished") < output.index("atexit ran")


def test_a_command_past_its_timeout_is_killed_with_the_programs_it_started(warm, tmp_path):
    runner, env = warm
    _module(tmp_path, "hangs", """
        import subprocess, time
        child = subprocess.Popen(["sleep", "120"])
        open("child.pid", "w").write(str(child.pid))
        time.sleep(120)
    """)
    start = time.monotonic()
    code, output = runner.run(["hangs"], tmp_path, env, timeout=3)
    assert code == 124 and "(timed out after 3 s)" in output
    assert time.monotonic() - start < 30
    pid = int((tmp_path / "child.pid").read_text())
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:  # killed: gone once its parent (init) has reaped it
        try:
            os.kill(pid, 0)
        except ProcessLookupError:
            break
        time.sleep(0.1)
    else:
        pytest.fail(f"the program the command started (pid {pid}) outlived the timeout")


def test_nothing_a_command_changes_reaches_the_next_one(warm, tmp_path):
    runner, env = warm
    _module(tmp_path, "changes", """
        import os, wfeval.cli.command
        wfeval.cli.command.LEFT_BEHIND = True
        os.environ["LEFT_BEHIND"] = "yes"
    """)
    _module(tmp_path, "looks", """
        import os, wfeval.cli.command
        print("module", hasattr(wfeval.cli.command, "LEFT_BEHIND"), "env", os.environ.get("LEFT_BEHIND"))
    """)
    assert runner.run(["changes"], tmp_path, env, timeout=60)[0] == 0
    code, output = runner.run(["looks"], tmp_path, env, timeout=60)
    assert (code, output.strip()) == (0, "module False env None")
    assert runner.cpu_seconds > 0


@pytest.mark.parametrize("line, argv", [
    ("python -m wfeval metric=[psnr,ssim]", ["wfeval", "metric=[psnr,ssim]"]),
    ("python -m wfeval 'metric=[psnr]' run.limit=2", ["wfeval", "metric=[psnr]", "run.limit=2"]),
    ("python -m wfeval.recipes.train benchmark=gridworld", ["wfeval.recipes.train", "benchmark=gridworld"]),
    ("WFEVAL_TRUST=x python -m wfeval", None),  # a variable for bash to set
    ("python -m wfeval.compare a b | head -3", None),
    ("python -m wfeval hydra.run.dir=$HOME/x", None),
    ('python -m wfeval "run.name=$USER"', None),  # expanded inside double quotes
    ("python -m wfeval +x={a:1}", None),
    ("python -m wfeval > out.txt", None),
    ("python -m wfeval && ls", None),
    ("python -X importtime -m wfeval", None),  # what a fresh interpreter does is the point
    ("python -m wfevalx", None),
    ("python -m json.tool x", None),
])
def test_only_a_plain_python_m_wfeval_line_runs_forked(line, argv):
    assert forkable(line) == argv


def test_without_a_pidfd_a_command_is_still_waited_for_and_killed_on_time(monkeypatch):
    """Where ``pidfd_open`` is missing or refused (an older kernel, a seccomp filter), the server polls."""
    import subprocess

    from tests.docs import _warm_python

    monkeypatch.delattr(os, "pidfd_open")
    quick = subprocess.Popen(["sh", "-c", "exit 7"], start_new_session=True)
    assert _warm_python._wait(quick.pid, 30)[0] == 7
    slow = subprocess.Popen(["sleep", "60"], start_new_session=True)  # its own process group, as a command's
    start = time.monotonic()
    assert _warm_python._wait(slow.pid, 0.5)[0] == 124
    assert time.monotonic() - start < 10
