"""docs/memory-maze.md runs as written: the quick oracle/static check on one recorded maze."""

from __future__ import annotations

import json

from tests.benchmarks._doc_runner import run_doc


def _values(run) -> dict:
    results = json.loads((run / "results.json").read_text())["results"]
    return {k.split(".", 1)[1]: v["diagnostics"].get("value") for k, v in results.items()}


def test_memory_maze_page(maze_store, tmp_path, monkeypatch):
    # maze_store: skips (or fails under CI) without the renderer; the page's commands use it as their store
    # (WFEVAL_STORE), so the maze they record is the one the other Memory Maze tests record: made once per
    # test run (its recording is tested in test_memory_maze_recording.py, in another process too)
    oracle, static = run_doc("memory-maze.md", tmp_path, monkeypatch, store=maze_store)
    assert _values(oracle) == {"psnr": 100.0, "ssim": 1.0, "pose_error": 0.0}
    mine = _values(static)
    assert mine["psnr"] < 25 and mine["ssim"] < 0.8 and mine["pose_error"] > 0.3
