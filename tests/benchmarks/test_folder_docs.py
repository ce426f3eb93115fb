"""docs/dataset-folder.md and docs/adding-a-benchmark.md run as written."""

from __future__ import annotations

import json

from tests.benchmarks._doc_runner import run_doc
from tests.conftest import read_jsonl


def _results(run) -> dict:
    return json.loads((run / "results.json").read_text())["results"]


def test_dataset_folder_page(tmp_path, monkeypatch):
    runs = run_doc("dataset-folder.md", tmp_path, monkeypatch)
    exported, mine = runs
    assert _results(exported)["gw6.generated_rate"]["n_total"] == 6
    results = _results(mine)
    assert results["mine.generated_rate"]["n_total"] == 3 and results["mine.psnr"]["n_valid"] == 3
    samples = read_jsonl(mine / "samples.jsonl")
    assert samples[0]["metadata"]["dataset_files"]["image"] == "frames/clip-000.png"


def test_adding_a_benchmark_page(tmp_path, monkeypatch):
    ball, folder = run_doc("adding-a-benchmark.md", tmp_path, monkeypatch)
    rows = read_jsonl(ball / "samples.jsonl")
    assert len(rows) == 6 and len(rows[0]["metadata"]["final_ball_position"]) == 2
    manifest = json.loads((ball / "manifest.json").read_text())
    assert manifest["benchmark"]["runtime"] == {"renderer": "numpy", "scratch": str(ball / "ball_scratch"),
                                                "scratch_removed": True, "generation": "completed"}
    assert not (ball / "ball_scratch").exists()
    assert any(e["event"] == "ball_ready" for e in read_jsonl(ball / "events.jsonl"))
    for metric in ("psnr", "flicker"):
        assert _results(folder)[f"ball.{metric}"]["normalized_stats"] == \
            _results(ball)[f"ball.{metric}"]["normalized_stats"]
