"""Replay rebuilds results.json exactly; compare ranks a sweep; export writes CSV, JSON, Markdown."""

from __future__ import annotations

import csv
import json
import subprocess
import sys

from tests.conftest import cli_env, only_run_dir, run_cli


def _module(name, *args, cwd):
    return subprocess.run([sys.executable, "-m", name, *map(str, args)], cwd=cwd, env=cli_env(),
                          capture_output=True, text=True, timeout=300)


def _sweep(tmp_path, *extra):
    proc = run_cli(["-m", "model=oracle,static,random_actions", f"run.store_dir={tmp_path / 'store'}",
                    "run.progress=off", *extra], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return only_run_dir(tmp_path / "outputs" / "multirun")


def test_default_run_is_eligible_and_a_subset_is_not_with_every_reason(tmp_path):
    assert run_cli([f"run.store_dir={tmp_path / 'store'}"], cwd=tmp_path).returncode == 0
    full = json.loads((only_run_dir(tmp_path / "outputs" / "runs") / "results.json").read_text())
    assert full["evidence"]["eligible"] is True, full["evidence"]["reasons"]
    assert full["scorecard"]["score"] == 1.0
    assert list(full["slices"]["gridworld.generated_rate"]) == ["split=test"]
    proc = run_cli([f"run.store_dir={tmp_path / 'store'}", "run.limit=5"], cwd=tmp_path)
    assert "eligible: no (8 reasons)" in proc.stdout  # 7 suite metrics under min_valid + the dataset hash
    assert "5 valid samples < required 32" in proc.stdout


def test_replay_rebuilds_results_json_byte_for_byte_without_a_model(tmp_path):
    assert run_cli([f"run.store_dir={tmp_path / 'store'}", "benchmark.num_samples=6",
                    "benchmark.group_by=[split,metadata.episode_seed]"], cwd=tmp_path).returncode == 0
    run = only_run_dir(tmp_path / "outputs" / "runs")
    proc = _module("wfeval.replay", run, "--out", tmp_path / "replayed", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "replayed" / "results.json").read_bytes() == (run / "results.json").read_bytes()
    assert "# oracle on gridworld" in (tmp_path / "replayed" / "results.md").read_text()
    slices = json.loads((run / "results.json").read_text())["slices"]["gridworld.artifact_count"]
    assert len([g for g in slices if g.startswith("metadata.episode_seed=")]) == 6


def test_compare_prints_and_writes_a_leaderboard_with_intervals_and_eligibility(tmp_path):
    sweep = _sweep(tmp_path, "benchmark.num_samples=4")
    proc = _module("wfeval.compare", sweep, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0].split() == ["rank", "model", "gridworld.generated_rate", "gridworld.artifact_count",
                                "gridworld.psnr", "gridworld.ssim", "gridworld.flicker", "gridworld.action_following",
                                "gridworld.agent_position_error", "score", "eligible", "run"]
    # sorted by the gridworld scorecard's primary metric, psnr (higher is better)
    assert [line.split()[1] for line in lines[2:5]] == ["oracle", "random_actions", "static"]
    assert "1 [0.5101, 1]" in lines[2] and "≈" in lines[3]  # Wilson 95% for 4/4; ties marked
    assert all("no (8 reasons)" in line for line in lines[2:5])  # 4 samples: not the official dataset
    with open(sweep / "leaderboard.csv", newline="") as handle:
        table = list(csv.reader(handle))
    assert table[0][:2] == ["rank", "model"] and len(table) == 4
    assert (sweep / "leaderboard.md").read_text().startswith("| rank | model |")


def test_compare_of_a_folder_without_runs_exits_2(tmp_path):
    proc = _module("wfeval.compare", tmp_path, cwd=tmp_path)
    assert proc.returncode == 2 and "no results.json" in proc.stderr


def test_export_writes_one_row_per_run_and_measurement_in_each_format(tmp_path):
    sweep = _sweep(tmp_path, "benchmark.num_samples=3")
    for fmt in ("csv", "json", "md"):
        out = tmp_path / f"export.{fmt}"
        assert _module("wfeval.export", sweep, "--format", fmt, "--out", out, cwd=tmp_path).returncode == 0
    records = json.loads((tmp_path / "export.json").read_text())
    assert len(records) == 3 * 7  # runs × suite metrics
    assert {r["model"] for r in records} == {"oracle", "static", "random_actions"}
    rate = next(r for r in records if r["model"] == "static" and r["measurement"] == "gridworld.generated_rate")
    assert (rate["value"], rate["n_valid"], rate["ci_method"], rate["eligible"]) == (1.0, 3, "wilson", False)
    with open(tmp_path / "export.csv", newline="") as handle:
        assert len(list(csv.DictReader(handle))) == 3 * 7
    assert (tmp_path / "export.md").read_text().count("\n") == 2 + 3 * 7
