"""A sweep across protocols and models runs, and its leaderboard ranks within each protocol (a column each)."""

from __future__ import annotations

import json

from tests.conftest import read_jsonl, run_cli
from wfeval.report.leaderboard import leaderboard
from wfeval.report.runs import Entry


def _entry(model: str, protocol: dict | None, psnr: float) -> Entry:
    doc = {"run_id": f"{model}-{(protocol or {}).get('name', 'ol')}", "model": {"name": model},
           "benchmark": {"id": "gw"}, "protocol": protocol, "scorecard": {"primary": "psnr"},
           "metrics": {"gw.psnr": {"higher_is_better": True}},
           "results": {"gw.psnr": {"valid": True, "n_valid": 4, "n_total": 4, "n_skipped": 0,
                                   "diagnostics": {"value": psnr}, "confidence_interval": {}}}}
    return Entry.of_document(doc, overrides=[f"model={model}"])


def test_leaderboard_ranks_and_finds_the_best_within_each_protocol():
    closed = {"name": "closed_loop", "driver": "closed_loop",
              "policy": {"_target_": "wfeval.protocols.policies.RandomPolicy"}}
    board = leaderboard([_entry("static", None, 20.0), _entry("oracle", closed, 90.0), _entry("oracle", None, 100.0),
                         _entry("static", closed, 25.0)])
    assert [c.key for c in board.columns] == ["gw", "gw@closed_loop(random)"]  # a protocol is its own column
    details = {column.key: board.detail_table(column) for column in board.columns}
    psnr = details["gw"][0].index("psnr")  # the value column (the ladder column stands before it)
    tables = {key: [row[:2] + [row[psnr]] for row in rows] for key, (_, rows) in details.items()}
    assert tables["gw"] == [["1", "oracle", "100"], ["2", "static", "20"]]
    assert tables["gw@closed_loop(random)"] == [["1", "oracle", "90"], ["2", "static", "25"]]
    assert len(board.rows) == 2  # one row per model, both protocols in it
    only_open = leaderboard([_entry("static", None, 20.0), _entry("oracle", None, 100.0)])
    assert [c.key for c in only_open.columns] == ["gw"]


def test_a_sweep_across_protocols_and_models_keeps_protocols_apart(tmp_path):
    sweep = tmp_path / "sweep"
    proc = run_cli(["-m", "protocol=open_loop,autoregressive,closed_loop", "model=oracle,static",
                    "benchmark.num_samples=2", "metric=[psnr]", f"run.store_dir={tmp_path / 'store'}",
                    "run.progress=off", f"hydra.sweep.dir={sweep}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    protocols = {}
    for run in sorted(p for p in sweep.iterdir() if (p / "results.json").exists()):
        doc = json.loads((run / "results.json").read_text())
        protocols[(doc["protocol"]["name"], doc["model"]["name"])] = doc["results"]["gridworld.psnr"]["diagnostics"]["value"]
        assert json.loads((run / "manifest.json").read_text())["protocol"]["name"] == doc["protocol"]["name"]
    assert len(protocols) == 6 and all(protocols[(p, "oracle")] == 100.0 for p in ("open_loop", "autoregressive",
                                                                                    "closed_loop"))
    assert all(protocols[(p, "static")] < 40 for p in ("open_loop", "autoregressive", "closed_loop"))
    board = (sweep / "leaderboard.md").read_text()
    assert "## gridworld@closed_loop(random)" in board and "## gridworld@autoregressive" in board
    assert "results of different columns are never ranked together" in board
    steps = read_jsonl(sweep / "2_oracle" / "steps.jsonl")
    assert any(r["phase"] == "step" for r in steps)
