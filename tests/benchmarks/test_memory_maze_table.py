"""perf/maze_memory_table.py at small size: the docs' memory table of the maze baselines comes from
real runs (one sample, legs of 2 and 16 steps), with the oracle exact and forgetful
above it across its horizon."""

from __future__ import annotations

import importlib.util

from tests.conftest import ROOT


def test_the_maze_memory_table_fills_every_row_from_real_runs(maze_store, tmp_path):
    spec = importlib.util.spec_from_file_location("maze_memory_table", ROOT / "perf" / "maze_memory_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    text = module.table("memory_maze", trajectories=1, gaps=[2, 16], models=("oracle", "forgetful"),
                        root=tmp_path, store=str(maze_store), limit=1)
    lines = text.splitlines()
    assert lines[0].split(" | ")[1:4] == ["revisit_error", "gap ≤ 2", "gap ≤ 16"]
    rows = {line.split(" | ")[0].strip("| "): [c.strip(" |") for c in line.split(" | ")] for line in lines[2:4]}
    assert set(rows) == {"oracle", "forgetful"}
    assert rows["oracle"][1:] == ["0.00", "0.00", "0.00", "0.00", "0.000"]  # one sample: no interval
    # forgetful: exact within its 16-step horizon, redrawn across it (the 16-step leg crosses step 16)
    assert rows["forgetful"][2] == "0.00" and float(rows["forgetful"][3]) > 5.0
    assert lines[-1].startswith("memory_maze, 1 maze(s), 1 samples; wall seconds per model: oracle ")
