"""Replay rebuilds results.json exactly; compare ranks a sweep; export writes CSV, JSON, Markdown."""

from __future__ import annotations

import csv
import json

from tests.conftest import cli_env, only_run_dir, run_cli, run_python


def _module(name, *args, cwd):
    return run_python(["-m", name, *map(str, args)], cwd=cwd, env=cli_env(), timeout=300)


def test_default_run_is_eligible_and_a_subset_is_not_with_every_reason(tmp_path):
    assert run_cli([f"run.store_dir={tmp_path / 'store'}"], cwd=tmp_path).returncode == 0
    full = json.loads((only_run_dir(tmp_path / "outputs" / "runs") / "results.json").read_text())
    assert full["evidence"]["eligible"] is True, full["evidence"]["reasons"]
    assert full["scorecard"]["score"] == 1.0
    assert list(full["slices"]["gridworld.generated_rate"]) == ["split=test"]
    proc = run_cli([f"run.store_dir={tmp_path / 'store'}", "run.limit=5"], cwd=tmp_path)
    # one clear reason on the console: a subset of the pinned dataset
    assert "eligible: no (1 reason): a quick run on a subset: 5 samples, not the benchmark's pinned dataset" \
        in proc.stdout
    documents = [json.loads((p / "results.json").read_text()) for p in (tmp_path / "outputs" / "runs").iterdir()]
    [subset] = [d for d in documents if d["benchmark"]["n_samples"] == 5]
    # results.json keeps every rule's reason: 10 suite metrics under min_valid + the dataset hash
    assert len(subset["evidence"]["reasons"]) == 11
    assert "psnr: 5 valid samples < required 32" in subset["evidence"]["reasons"]


def test_replay_rebuilds_results_json_byte_for_byte_without_a_model(tmp_path):
    assert run_cli([f"run.store_dir={tmp_path / 'store'}", "benchmark.num_samples=6",
                    "benchmark.group_by=[split,metadata.episode_seed]"], cwd=tmp_path).returncode == 0
    run = only_run_dir(tmp_path / "outputs" / "runs")
    proc = _module("wfeval.replay", run, "--out", tmp_path / "replayed", "--check", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "replayed" / "results.json").read_bytes() == (run / "results.json").read_bytes()
    assert f"wrote {tmp_path / 'replayed' / 'results.json'} and {tmp_path / 'replayed' / 'results.md'}" in proc.stdout
    assert "matches the run's results.json byte for byte" in proc.stdout
    assert "gridworld.psnr                  100 dB" in proc.stdout  # units beside the values
    assert "# oracle on gridworld" in (tmp_path / "replayed" / "results.md").read_text()
    slices = json.loads((run / "results.json").read_text())["slices"]["gridworld.artifact_count"]
    assert len([g for g in slices if g.startswith("metadata.episode_seed=")]) == 6


def test_replay_says_when_its_result_differs_from_the_runs(tmp_path):
    assert run_cli([f"run.store_dir={tmp_path / 'store'}", "benchmark.num_samples=3"], cwd=tmp_path).returncode == 0
    run = only_run_dir(tmp_path / "outputs" / "runs")
    document = json.loads((run / "results.json").read_text())
    document["results"]["gridworld.psnr"]["diagnostics"]["value"] = 99.0  # someone edited the run's numbers
    (run / "results.json").write_text(json.dumps(document))
    proc = _module("wfeval.replay", run, cwd=tmp_path)
    assert proc.returncode == 0
    assert "DIFFERS from the run's results.json" in proc.stdout
    assert "results.gridworld.psnr.diagnostics.value: 99.0 in the run, 100.0 replayed" in proc.stdout
    assert _module("wfeval.replay", run, "--check", cwd=tmp_path).returncode == 1


def test_compare_prints_a_leaderboard_with_intervals_units_and_grouped_eligibility(sweep_report, tmp_path):
    sweep = sweep_report.sweep  # the session's 3-model sweep of 6 samples each (tests/report/conftest.py)
    proc = _module("wfeval.compare", sweep, cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    lines = proc.stdout.splitlines()
    assert lines[0] == "gridworld (ranked by psnr, higher is better)"
    assert lines[1].split()[:4] == ["rank", "model", "score", "eligible"]
    assert "psnr (dB)" in proc.stdout
    assert [line.split()[1] for line in lines[3:6]] == ["oracle", "random_actions", "static"]
    assert all("no (1 reason)" in line for line in lines[3:6])  # not "no (1 reasons)"
    assert "1 [0.6097, 1]" in proc.stdout  # Wilson 95% for 6/6: 6 / (6 + 1.96²)
    assert "not eligible (oracle, random_actions, static):" in proc.stdout
    assert "a quick run on a subset: 6 samples" in proc.stdout
    assert not (sweep / "leaderboard.csv").exists() or (sweep / "leaderboard.csv").stat().st_mtime <= \
        (sweep / "sweep_summary.md").stat().st_mtime  # compare itself wrote nothing


def test_compare_of_a_folder_without_runs_exits_2(tmp_path):
    proc = _module("wfeval.compare", tmp_path, cwd=tmp_path)
    assert proc.returncode == 2 and "no results.json" in proc.stderr


def test_export_writes_one_row_per_run_and_measurement_in_each_format(sweep_report, tmp_path):
    sweep = sweep_report.sweep  # the session's 3-model sweep of 6 samples each
    for fmt in ("csv", "json", "md"):
        out = tmp_path / f"export.{fmt}"
        assert _module("wfeval.export", sweep, "--format", fmt, "--out", out, cwd=tmp_path).returncode == 0
    records = json.loads((tmp_path / "export.json").read_text())
    assert len(records) == 3 * 10  # runs × suite metrics
    assert {r["model"] for r in records} == {"oracle", "static", "random_actions"}
    rate = next(r for r in records if r["model"] == "static" and r["measurement"] == "gridworld.generated_rate")
    assert (rate["value"], rate["n_valid"], rate["ci_method"], rate["eligible"]) == (1.0, 6, "wilson", False)
    with open(tmp_path / "export.csv", newline="") as handle:
        assert len(list(csv.DictReader(handle))) == 3 * 10
    assert (tmp_path / "export.md").read_text().count("\n") == 2 + 3 * 10
