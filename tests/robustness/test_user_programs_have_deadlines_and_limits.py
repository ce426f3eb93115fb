"""Hangs past ``model.timeout_s``: every read from a user program has a deadline that holds while data
arrives and a size limit, every write to it a deadline, and every wait on it a bound -- a step program
that closes its stdout but stays alive, answers an endless line, trickles bytes or never reads its
input fails that sample in about ``timeout_s``, naming what it did; a log or an error message of any
size is read only as far as it is shown."""

from __future__ import annotations

import sys
import textwrap
import time

import pytest

from tests.robustness._run import wfeval
from wfeval.models.command_steps import MAX_REPLY_BYTES, StepSession

TIMEOUT = 1.5


def _program(tmp_path, body: str):
    path = tmp_path / "program.py"
    path.write_text("import os, sys, time\n" + textwrap.dedent(body))
    return [sys.executable, str(path)]


def _session(tmp_path, body):
    return StepSession(_program(tmp_path, body), cwd=tmp_path, env={}, timeout_s=TIMEOUT, work_dir=tmp_path / "w",
                       request_line=lambda request: {})


def _fails_in_time(session, message, words):
    started = time.monotonic()
    with pytest.raises(RuntimeError, match=words):
        session.call(message)
    elapsed = time.monotonic() - started
    session.close()
    assert elapsed < TIMEOUT + 4.0, elapsed
    return elapsed


def test_a_program_that_closes_stdout_but_stays_alive_fails_instead_of_hanging(tmp_path):
    session = _session(tmp_path, """
        sys.stdin.readline()
        os.close(1)
        time.sleep(60)
    """)
    _fails_in_time(session, {"op": "start"}, "closed its output but kept running")


def test_an_endless_reply_line_is_cut_at_the_size_limit(tmp_path):
    session = _session(tmp_path, f"""
        sys.stdin.readline()
        chunk = b"x" * 65536
        for _ in range({2 * MAX_REPLY_BYTES // 65536 + 2}):
            os.write(1, chunk)
        time.sleep(60)
    """)
    _fails_in_time(session, {"op": "start"}, "longer than")


def test_a_reply_trickling_in_byte_by_byte_still_meets_the_deadline(tmp_path):
    session = _session(tmp_path, """
        sys.stdin.readline()
        while True:
            os.write(1, b"{")
            time.sleep(0.05)
    """)
    elapsed = _fails_in_time(session, {"op": "start"}, "gave no answer within timeout_s=1.5")
    assert elapsed >= TIMEOUT * 0.9  # the deadline held although bytes kept coming


def test_a_program_that_never_reads_its_input_cannot_block_the_write(tmp_path):
    session = _session(tmp_path, "time.sleep(60)\n")
    _fails_in_time(session, {"op": "start", "padding": "x" * (4 << 20)}, "did not read its input")


def test_a_program_that_exits_is_reported_with_its_status(tmp_path):
    session = _session(tmp_path, "sys.stdin.readline()\nsys.exit(3)\n")
    _fails_in_time(session, {"op": "start"}, r"exited \(status 3\)")


def test_stopping_a_program_that_ignores_sigterm_is_bounded(tmp_path):
    import subprocess

    from wfeval.models.processes import kill_group

    proc = subprocess.Popen(_program(tmp_path, """
        import signal
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        print("ready", flush=True)
        time.sleep(60)
    """), stdout=subprocess.PIPE, start_new_session=True)
    proc.stdout.readline()
    started = time.monotonic()
    kill_group(proc)
    assert proc.poll() is not None and time.monotonic() - started < 10


def test_a_huge_log_or_error_file_is_read_only_as_far_as_it_is_shown(tmp_path):
    from wfeval.models.processes import read_head, read_tail

    log = tmp_path / "stderr.txt"
    with log.open("wb") as handle:
        handle.write(b"a" * (32 << 20) + b"the last words")
    assert read_tail(log, 14) == "the last words"
    assert read_head(log, 5) == "aaaaa"


def test_a_run_whose_step_program_stops_answering_fails_each_sample_in_time(monkeypatch, capsys, tmp_path):
    argv = _program(tmp_path, """
        sys.stdin.readline()
        os.close(1)
        time.sleep(60)
    """)
    started = time.monotonic()
    ran = wfeval(monkeypatch, capsys, tmp_path, "model=command", "model.argv=null",
                 f"model.step_argv=[{argv[0]},{argv[1]}]", f"model.timeout_s={TIMEOUT}", "protocol=autoregressive",
                 "metric=[generated_rate]", samples=2)
    assert ran.code == 0, ran.err
    errors = [g["error"] for g in ran.generations()]
    assert len(errors) == 2 and all("closed its output but kept running" in e for e in errors)
    assert ran.results["gridworld.generated_rate"]["diagnostics"]["value"] == 0.0
    assert time.monotonic() - started < 120
