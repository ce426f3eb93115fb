"""Misleading endings: a run that ends says so truthfully -- user code calling ``sys.exit(0)`` fails
the run (exit 1, named), refused dataset lines count against coverage, ``protocol.chunk=0`` is
refused, the training command's search path keeps the built-in benchmarks, and a resume of a folder
naming a program does not run it unless the user trusts it."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest

from tests.conftest import ROOT, cli_env, run_python
from tests.robustness._run import wfeval

MODELS = "tests.robustness._models"
EXAMPLE = ROOT / "examples" / "datasets" / "gridworld_tiny"


# ---- user code ending the process ------------------------------------------------------------------


@pytest.mark.parametrize("overrides, who", [
    (["model=python", f"model.object._target_={MODELS}.ExitingModel"], "model 'oracle' (generating sample"),
    (["model=python", f"model.object._target_={MODELS}.ExitingSetupModel"], "model 'oracle': setup()"),
    (["protocol=closed_loop", "policy=user", f"policy._target_={MODELS}.ExitingPolicy"], "generating sample"),
])
def test_user_code_calling_sys_exit_0_fails_the_run_with_exit_1(monkeypatch, capsys, tmp_path, overrides, who):
    ran = wfeval(monkeypatch, capsys, tmp_path, *overrides, "metric=[generated_rate]", samples=2)
    assert ran.code == 1, ran.err
    assert who in ran.err and "ended the process (SystemExit(0)" in ran.err
    assert ran.manifest["status"] == "failed" and "SystemExit(0)" in ran.manifest["error"]
    assert not (ran.run_dir / "results.json").exists()


def test_a_metric_calling_sys_exit_fails_the_run_naming_the_metric(monkeypatch, capsys, tmp_path):
    ran = wfeval(monkeypatch, capsys, tmp_path, "metric=[exiting,psnr]", searchpath=True, samples=2)
    assert ran.code == 1 and "metric 'exiting' (scoring sample" in ran.err, ran.err
    assert ran.manifest["status"] == "failed"


# ---- refused dataset lines count -------------------------------------------------------------------


def _dataset(tmp_path, refuse: dict[int, dict]):
    """8 samples made of the example's 4, lines ``refuse`` spoiled (a bad value, an unknown key)."""
    import shutil

    root = tmp_path / "data"
    shutil.copytree(EXAMPLE, root)
    rows = [json.loads(line) for line in (EXAMPLE / "manifest.jsonl").read_text().splitlines()]
    out = []
    for i in range(8):
        row = {**rows[i % 4], "sample_id": f"s{i}", **refuse.get(i, {})}
        out.append(json.dumps(row))
    (root / "manifest.jsonl").write_text("\n".join(out) + "\n")
    return root


def test_six_of_eight_usable_lines_is_six_of_eight_and_not_eligible(monkeypatch, capsys, tmp_path):
    root = _dataset(tmp_path, {3: {"fps": -1}, 6: {"bogus_key": 1}})
    ran = wfeval(monkeypatch, capsys, tmp_path, "benchmark=folder", f"benchmark.dataset_root={root}",
                 "model=oracle", "metric=[generated_rate,artifact_count,psnr,ssim,flicker]", samples=None)
    assert ran.code == 0, ran.err
    psnr = ran.results["gridworld_tiny.psnr"]
    assert (psnr["n_valid"], psnr["n_total"]) == (6, 8) and "6/8 (75%)" in ran.table_line("gridworld_tiny.psnr")
    assert "eligible: no" in ran.out and "coverage 0.750 < required 0.950" in ran.out
    assert "6 of 8 sample(s) usable" in ran.err and "2 line(s) refused" in ran.err
    ids = sorted(g["sample_id"] for g in ran.generations() if g["stop_reason"] == "input_error")
    assert ids == ["s3", "s6"]  # a refused line keeps its own id when it could be read


def test_a_refused_line_without_a_readable_id_counts_under_its_line_number(tmp_path):
    from wfeval.benchmarks.folder.adapter import FolderBenchmark

    root = _dataset(tmp_path, {})
    lines = (root / "manifest.jsonl").read_text().splitlines()
    lines[2] = "{not json"
    (root / "manifest.jsonl").write_text("\n".join(lines) + "\n")
    records = FolderBenchmark(str(root)).records()
    assert len(records) == 8 and records[2].sample_id == "refused-line-3"
    assert records[2].refused and "malformed JSON" in records[2].refused[0]


def test_a_strict_dataset_with_a_refused_line_still_stops_the_run(monkeypatch, capsys, tmp_path):
    root = _dataset(tmp_path, {3: {"fps": -1}})
    ran = wfeval(monkeypatch, capsys, tmp_path, "benchmark=folder", f"benchmark.dataset_root={root}",
                 "benchmark.strict=true", "metric=[psnr]", samples=None)
    assert ran.code == 2 and "manifest.jsonl:4" in ran.err


# ---- chunk, training command, resume -----------------------------------------------------------------


@pytest.mark.parametrize("chunk", ["0", "-1"])
def test_a_chunk_of_zero_or_less_is_refused_naming_the_key(monkeypatch, capsys, tmp_path, chunk):
    ran = wfeval(monkeypatch, capsys, tmp_path, "protocol=autoregressive", f"protocol.chunk={chunk}",
                 "metric=[generated_rate]", samples=1)
    assert ran.code == 2 and "protocol.chunk" in ran.err, ran.err
    assert not (ran.run_dir / "results.json").exists()


@pytest.mark.subprocess  # a user's own copy of wfeval's config package on the path
def test_the_training_command_keeps_the_built_in_benchmarks_beside_a_users_search_path(tmp_path):
    own = tmp_path / "conf"
    (own / "benchmark").mkdir(parents=True)
    proc = subprocess.run([sys.executable, "-m", "wfeval.recipes.train", f"hydra.searchpath=[file://{own}]",
                           "benchmark=gridworld", "--cfg", "job"], capture_output=True, text=True, env=cli_env(),
                          cwd=tmp_path, timeout=300)
    assert proc.returncode == 0, proc.stderr
    assert "name: gridworld" in proc.stdout and "Did you mean" not in proc.stderr


def test_an_unknown_built_in_name_says_the_search_path_lost_the_built_ins():
    from wfeval.config.errors import unknown_choice_message

    message = unknown_choice_message("benchmark", "gridworld", ["folder", "gridworld"])
    assert "is built in" in message and "pkg://wfeval.conf" in message and "Did you mean" not in message


def _foreign_command_run(monkeypatch, capsys, tmp_path, sentinel):
    program = tmp_path / "elsewhere.py"
    program.write_text(f"open({str(sentinel)!r}, 'w').write('ran')\n")
    ran = wfeval(monkeypatch, capsys, tmp_path, "model=command", f"model.argv=[{sys.executable},{program}]",
                 "metric=[generated_rate]", samples=1)
    assert sentinel.exists()
    sentinel.unlink()
    (ran.run_dir / "manifest.json").write_text(json.dumps({**ran.manifest, "status": "interrupted"}))
    return ran.run_dir


def _resume(run_dir, *args):
    return run_python(["-m", "wfeval.resume", str(run_dir), *args], env=cli_env(), cwd=ROOT, timeout=300)


def test_a_resume_never_runs_a_program_a_run_folder_names_without_trust(monkeypatch, capsys, tmp_path):
    sentinel = tmp_path / "SENTINEL"
    run_dir = _foreign_command_run(monkeypatch, capsys, tmp_path, sentinel)
    proc = _resume(run_dir)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr, proc.stderr
    assert "names programs to run" in proc.stderr and "model.argv=" in proc.stderr
    assert "--trust-programs" in proc.stderr and not sentinel.exists()


def test_a_resume_with_trust_programs_runs_it(monkeypatch, capsys, tmp_path):
    sentinel = tmp_path / "SENTINEL"
    run_dir = _foreign_command_run(monkeypatch, capsys, tmp_path, sentinel)
    proc = _resume(run_dir, "--trust-programs")
    assert proc.returncode == 0, proc.stderr
    assert sentinel.read_text() == "ran"


def test_a_resume_refuses_an_environment_for_programs_from_the_folder(monkeypatch, capsys, tmp_path):
    import yaml

    ran = wfeval(monkeypatch, capsys, tmp_path, "metric=[generated_rate]", samples=1)
    hydra_yaml = ran.run_dir / ".hydra" / "hydra.yaml"
    cfg = yaml.safe_load(hydra_yaml.read_text())
    cfg["hydra"]["overrides"]["hydra"].append("hydra.job.env_set.LD_PRELOAD=/tmp/evil.so")
    hydra_yaml.write_text(yaml.safe_dump(cfg))
    proc = _resume(ran.run_dir)
    assert proc.returncode == 2 and "hydra.job.env_set.LD_PRELOAD" in proc.stderr, proc.stderr
    assert os.environ.get("LD_PRELOAD") != "/tmp/evil.so"
