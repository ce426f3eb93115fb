"""Files outside the run folder destroyed: a run folder is data anyone could have written, so a
symbolic link planted where a run, a resume, a replay or Hydra writes is refused (exit 1, the path,
what to do) before anything is written, and every file of the folder is opened without following
links -- the file the link points at is never truncated or appended to."""

from __future__ import annotations

import errno
import os

import pytest

from tests.conftest import ROOT, cli_env, run_python
from tests.robustness._run import wfeval

VICTIM_TEXT = "precious notes\n"


@pytest.fixture
def victim(tmp_path):
    path = tmp_path / "home" / "victim.txt"
    path.parent.mkdir()
    path.write_text(VICTIM_TEXT)
    return path


def _planted(tmp_path, name, target):
    run_dir = tmp_path / "run"
    (run_dir / name).parent.mkdir(parents=True, exist_ok=True)
    os.symlink(target, run_dir / name)
    return run_dir


@pytest.mark.parametrize("name", [".wfeval.lock", "events.jsonl", "steps.jsonl", "metrics.jsonl",
                                  ".generations.jsonl.partial", ".hydra/config.yaml", "manifest.json"])
def test_a_run_refuses_a_folder_with_a_link_where_it_writes_and_the_target_is_untouched(monkeypatch, capsys,
                                                                                        tmp_path, victim, name):
    _planted(tmp_path, name, victim)
    ran = wfeval(monkeypatch, capsys, tmp_path, "metric=[generated_rate]", samples=1)
    assert ran.code == 1, ran.err
    assert name.rsplit("/", 1)[-1] in ran.err and "symbolic link" in ran.err and "(ELOOP)" in ran.err
    assert "remove the link" in ran.err
    assert victim.read_text() == VICTIM_TEXT


def test_a_linked_hydra_folder_is_refused_before_hydra_writes_into_it(monkeypatch, capsys, tmp_path):
    elsewhere = tmp_path / "someone_elses"
    elsewhere.mkdir()
    _planted(tmp_path, ".hydra", elsewhere)
    ran = wfeval(monkeypatch, capsys, tmp_path, "metric=[generated_rate]", samples=1)
    assert ran.code == 1 and ".hydra" in ran.err
    assert list(elsewhere.iterdir()) == []


def test_a_resume_of_a_folder_with_a_planted_events_link_is_refused(monkeypatch, capsys, tmp_path, victim):
    first = wfeval(monkeypatch, capsys, tmp_path, "metric=[generated_rate]", samples=1)
    assert first.code == 0
    (first.run_dir / "events.jsonl").unlink()
    os.symlink(victim, first.run_dir / "events.jsonl")
    proc = run_python(["-m", "wfeval.resume", str(first.run_dir)], env=cli_env(), cwd=ROOT, timeout=300)
    assert proc.returncode == 1, proc.stderr
    assert "events.jsonl" in proc.stderr and "symbolic link" in proc.stderr and "Traceback" not in proc.stderr
    assert victim.read_text() == VICTIM_TEXT


def test_a_replay_into_a_linked_replay_folder_is_refused(monkeypatch, capsys, tmp_path):
    first = wfeval(monkeypatch, capsys, tmp_path, "metric=[generated_rate]", samples=1)
    elsewhere = tmp_path / "someone_elses"
    elsewhere.mkdir()
    os.symlink(elsewhere, first.run_dir / "replay")
    from wfeval.cli.replay import main

    assert main([str(first.run_dir)]) == 1
    assert "symbolic link" in capsys.readouterr().err and list(elsewhere.iterdir()) == []


def test_appending_through_a_link_raises_eloop_naming_the_path(tmp_path, victim):
    from wfeval.storage.rundir import RunDirectory

    os.symlink(victim, tmp_path / "events.jsonl")
    with pytest.raises(OSError) as raised:
        RunDirectory(tmp_path).event("run_started")
    assert raised.value.errno == errno.ELOOP and raised.value.filename == str(tmp_path / "events.jsonl")
    assert victim.read_text() == VICTIM_TEXT


def test_the_lock_is_never_taken_through_a_link(tmp_path, victim):
    from wfeval.pipeline.lock import run_lock

    os.symlink(victim, tmp_path / ".wfeval.lock")
    with pytest.raises(OSError) as raised:
        with run_lock(tmp_path):
            pass
    assert raised.value.errno == errno.ELOOP and victim.read_text() == VICTIM_TEXT
