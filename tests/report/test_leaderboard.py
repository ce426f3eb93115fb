"""Leaderboards: models as rows, benchmarks as columns; the terminal, Markdown and CSV say the same."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from tests.conftest import cli_env, run_cli, run_python
from wfeval.report.leaderboard import leaderboard, render_csv, render_text
from wfeval.report.runs import Entry

MODELS = ("oracle", "static", "noisy")  # the two_benchmarks sweep's (conftest)


def _module(name, *args, cwd, env=None):
    return run_python(["-m", name, *map(str, args)], cwd=cwd, env=env or cli_env(), timeout=300)


def _headline(job: Path, measurement: str) -> float:
    agg = json.loads((job / "results.json").read_text())["results"][measurement]
    return agg["diagnostics"].get("value", agg["normalized_stats"].get("mean"))


def _jobs(sweep: Path) -> dict[tuple[str, str], Path]:
    out = {}
    for job in sweep.iterdir():
        if (job / "results.json").is_file():
            doc = json.loads((job / "results.json").read_text())
            out[(doc["benchmark"]["id"], doc["model"]["name"])] = job
    return out


def test_a_two_benchmark_sweep_gives_one_row_per_model_with_both_benchmarks_everywhere(two_benchmarks, tmp_path):
    before = sorted(p.relative_to(two_benchmarks) for p in two_benchmarks.rglob("*"))
    proc = _module("wfeval.compare", two_benchmarks, "--out", tmp_path / "board", cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    jobs = _jobs(two_benchmarks)
    # independent ranking: gridworld PSNR (the scorecard's primary), higher first
    expected = sorted(MODELS, key=lambda m: -_headline(jobs[("gridworld", m)], "gridworld.psnr"))
    lines = proc.stdout.splitlines()
    head = lines.index(next(line for line in lines if line.startswith("models × benchmarks")))
    table = lines[head + 1:head + 6]
    assert table[0].split()[:2] == ["rank", "model"] and "gridworld: psnr (dB)" in table[0]
    assert "atari_pong: psnr (dB)" in table[0]
    assert [line.split()[1] for line in table[2:5]] == expected  # one row per model, no "missing"
    for line in table[2:5]:
        model = line.split()[1]
        assert f"{_headline(jobs[('gridworld', model)], 'gridworld.psnr'):.4g}" in line
        assert f"{_headline(jobs[('atari_pong', model)], 'atari_pong.psnr'):.4g}" in line
    assert "missing" not in proc.stdout
    with open(tmp_path / "board" / "leaderboard.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    assert [r["model"] for r in rows] == expected
    for r in rows:
        for bench in ("gridworld", "atari_pong"):
            assert float(r[f"{bench}.psnr"]) == _headline(jobs[(bench, r["model"])], f"{bench}.psnr")
            assert r[f"{bench}.run"] == jobs[(bench, r["model"])].name
    markdown = (tmp_path / "board" / "leaderboard.md").read_text()
    md_rows = [line for line in markdown.splitlines() if line.startswith("| ") and not line.startswith(("| rank", "| ---"))]
    assert [r.split("|")[2].strip() for r in md_rows[:3]] == expected  # the headline table, same order
    # compare wrote only where --out said: the sweep it read is untouched
    assert sorted(p.relative_to(two_benchmarks) for p in two_benchmarks.rglob("*")) == before


def test_terminal_output_fits_the_width(two_benchmarks, tmp_path):
    for width, env in ((100, cli_env()), (120, cli_env(COLUMNS="120"))):
        proc = _module("wfeval.compare", two_benchmarks, cwd=tmp_path, env=env)
        assert proc.returncode == 0, proc.stderr
        assert max(len(line) for line in proc.stdout.splitlines()) <= width
    narrow = _module("wfeval.compare", two_benchmarks, "--width", "80", cwd=tmp_path)
    assert max(len(line) for line in narrow.stdout.splitlines()) <= 80


def test_compare_writes_nothing_without_out_and_never_into_a_run_it_reads(two_benchmarks, tmp_path):
    before = sorted(p.relative_to(two_benchmarks) for p in two_benchmarks.rglob("*"))
    assert _module("wfeval.compare", two_benchmarks, cwd=two_benchmarks).returncode == 0
    job = next(p for p in two_benchmarks.iterdir() if (p / "results.json").is_file())
    refused = _module("wfeval.compare", two_benchmarks, "--out", job / "board", cwd=tmp_path)
    assert refused.returncode == 2 and "inside the run folder" in refused.stderr
    assert sorted(p.relative_to(two_benchmarks) for p in two_benchmarks.rglob("*")) == before


def test_sortable_by_any_measurement_and_by_score(two_benchmarks, tmp_path):
    jobs = _jobs(two_benchmarks)
    proc = _module("wfeval.compare", two_benchmarks, "--sort", "atari_pong.ssim", "--out", tmp_path / "a",
                   cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    with open(tmp_path / "a" / "leaderboard.csv", newline="") as handle:
        order = [r["model"] for r in csv.DictReader(handle)]
    assert order == sorted(MODELS, key=lambda m: -_headline(jobs[("atari_pong", m)], "atari_pong.ssim"))
    assert "ranked by atari_pong.ssim (higher is better)" in proc.stdout
    score = _module("wfeval.compare", two_benchmarks, "--primary", "gridworld.score", "--out", tmp_path / "s",
                    cwd=tmp_path)
    assert score.returncode == 0, score.stderr
    with open(tmp_path / "s" / "leaderboard.csv", newline="") as handle:
        rows = list(csv.DictReader(handle))
    scores = [float(r["gridworld.score"]) for r in rows]
    assert scores == sorted(scores, reverse=True)
    ambiguous = _module("wfeval.compare", two_benchmarks, "--sort", "score", cwd=tmp_path)
    assert ambiguous.returncode == 2 and "gridworld.score" in ambiguous.stderr
    unknown = _module("wfeval.compare", two_benchmarks, "--sort", "gridworld.psrn", cwd=tmp_path)
    assert unknown.returncode == 2 and "gridworld.psnr" in unknown.stderr


def _entry(model: str, benchmark: str = "gridworld", overrides=None, folder=None, psnr=20.0, direction=True,
           task=None):
    doc = {"run_id": folder or f"{benchmark}_{model}", "model": {"name": model, "key": model},
           "benchmark": {"id": benchmark, "n_samples": 8},
           "metrics": {f"{benchmark}.psnr": {"higher_is_better": direction, "unit": "dB"},
                       f"{benchmark}.count": {"higher_is_better": None}},
           "results": {f"{benchmark}.psnr": {"valid": True, "n_valid": 8, "n_total": 8, "diagnostics": {"value": psnr},
                                             "confidence_interval": {"low": psnr - 1, "high": psnr + 1}},
                       f"{benchmark}.count": {"valid": True, "n_valid": 8, "n_total": 8, "diagnostics": {"value": psnr},
                                              "confidence_interval": {"low": psnr - 5, "high": psnr + 5}}},
           "scorecard": {"primary": "psnr", "score": psnr / 100}, "evidence": {"eligible": True, "reasons": []}}
    return Entry.of_document(doc, Path(f"/runs/{folder or benchmark + '_' + model}"),
                             overrides=overrides if overrides is not None else [f"model={model}"], task=task)


def test_checkpoint_rows_are_named_by_the_override_that_differs():
    entries = [_entry("learned", overrides=["model=learned", f"model.checkpoint=outputs/recipes/gw/{step}/model.pt",
                                            "run.store_dir=/s"], folder=step, psnr=psnr)
               for step, psnr in (("step_1000", 25.0), ("step_2000", 27.0))]
    board = leaderboard(entries)
    assert [r.label for r in board.rows] == ["model.checkpoint=…/step_2000/model.pt",
                                             "model.checkpoint=…/step_1000/model.pt"]
    text = render_text(board, 100)
    assert "model.checkpoint=outputs/recipes/gw/step_2000/model.pt" in text  # full names in the legend
    same = leaderboard([_entry("oracle", folder="run_a", psnr=30), _entry("oracle", folder="run_b", psnr=31)])
    assert [r.label for r in same.rows] == ["oracle (run_b)", "oracle (run_a)"]  # never two identical names


def test_runs_of_one_model_on_two_benchmarks_share_a_row_and_ranks_follow_the_direction():
    entries = [_entry("a", psnr=10), _entry("b", psnr=30), _entry("a", "pong", psnr=50), _entry("b", "pong", psnr=5)]
    board = leaderboard(entries)
    assert [c.key for c in board.columns] == ["gridworld", "pong"]
    assert [(r.label, sorted(r.entries)) for r in board.rows] == [("b", ["gridworld", "pong"]),
                                                                  ("a", ["gridworld", "pong"])]
    by_pong = leaderboard(entries, "pong.psnr")
    assert [r.label for r in by_pong.rows] == ["a", "b"]
    lower = leaderboard([_entry("a", psnr=10, direction=False), _entry("b", psnr=30, direction=False)])
    assert [r.label for r in lower.rows] == ["a", "b"]


def test_the_tie_mark_is_only_on_worse_values_within_the_best_interval_and_never_without_a_direction():
    board = leaderboard([_entry("a", psnr=20.0), _entry("b", psnr=20.5), _entry("c", psnr=20.5), _entry("d", psnr=5)])
    column = board.columns[0]
    marks = {r.label: board.cell(r, column, "psnr").tie for r in board.rows}
    assert marks == {"b": False, "c": False, "a": True, "d": False}  # equal to the best: no mark; overlap: mark
    assert not any(board.cell(r, column, "count").tie for r in board.rows)  # no direction: no best, no mark
    csv_rows = list(csv.DictReader(io.StringIO(render_csv(board))))
    assert [r["model"] for r in csv_rows] == ["b", "c", "a", "d"]


def test_a_planning_task_is_its_own_column_ranked_by_goal_success(tmp_path):
    # the column's name and ranking are what is checked: two runs (not a sweep: Hydra composes each of
    # its jobs several times) of 2 planned samples each, a small planner, compared as one folder
    for model in ("oracle", "static"):
        proc = run_cli(["task=goal_reaching", f"model={model}", "benchmark.num_samples=2",
                        "protocol.planner.candidates=8", "run.progress=off", "run.report=false",
                        f"run.store_dir={tmp_path / 'store'}"], cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
    runs = tmp_path / "outputs" / "runs"
    assert len(list(runs.iterdir())) == 2
    out = _module("wfeval.compare", runs, cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    assert "gridworld/goal_reaching (ranked by goal_success, higher is better)" in out.stdout
    assert "ranked by gridworld/goal_reaching.goal_success" in out.stdout
