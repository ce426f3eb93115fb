"""What a process that evaluates again and again pays each time, in one process: composing the config
(once a command, :func:`wfeval.pipeline.compose.compose_run`) and a Memory Maze run's episodes (built
once, then kept for the next run).

Run: ``python perf/repeat_runs.py [--compositions 20] [--maze-runs 3] [--store DIR]`` (the maze part
needs ``wfeval[maze3d]`` and Mesa's EGL: docs/memory-maze.md; ``--maze-runs 0`` skips it).

1. Compositions: the run config of the default command line and of ``task=controllability
   extra_metrics=[mse]`` made by ``compose_run`` (Hydra's compose API), each round counted at Hydra's
   config loader (one composition each: the metric nodes the task and ``extra_metrics`` add are part of
   it); the median seconds of one ``compose_run`` printed per command line.
2. Memory Maze: the same small run (``benchmark=memory_maze``, one trajectory, ``run.limit=2``, ``model=lagged``,
   ``metric=[psnr,pose_error]``) run again in one process, alternating between the pool of built
   episodes as it is (``simulator.EPISODES``) and no pool (every simulator builds its episode); the
   recording is made once first and shared. Printed: seconds per run (generation and scoring; the
   config composed once), each way, and the results of both ways, which must be equal.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(ROOT), str(ROOT / "tests")]


def compositions(rounds: int) -> None:
    from hydra import initialize_config_module
    from hydra.core.global_hydra import GlobalHydra

    from wfeval.config import register_schemas
    from wfeval.pipeline.compose import compose_run

    register_schemas()
    commands = {"default": [], "task=controllability extra_metrics=[mse]": ["task=controllability",
                                                                            "extra_metrics=[mse]"]}
    with initialize_config_module("wfeval.conf", version_base="1.3"):
        loader = GlobalHydra.instance().config_loader()
        load, counted = loader.load_configuration, []
        loader.load_configuration = lambda *a, **k: counted.append(1) or load(*a, **k)  # this loader only
        for overrides in commands.values():
            compose_run(overrides)  # imports, plugin discovery, derived schemas: paid once
        for name, overrides in commands.items():
            seconds = []
            for _ in range(rounds):
                counted.clear()
                began = time.perf_counter()
                compose_run(overrides)
                seconds.append(time.perf_counter() - began)
                assert len(counted) == 1, f"{name}: {len(counted)} compositions"
            print(f"compose_run of {name}: one composition, median of {rounds}: "
                  f"{statistics.median(seconds) * 1000:.0f} ms")


def maze_runs(runs: int, store: Path) -> None:
    from conftest import compose
    from omegaconf import OmegaConf

    from wfeval.benchmarks.memory_maze import simulator
    from wfeval.pipeline.runner import run_from_config

    overrides = ["benchmark=memory_maze", "benchmark.num_trajectories=1", "run.limit=2", "model=lagged",
                 "metric=[psnr,pose_error]", f"run.store_dir={store}", "run.progress=off", "run.report=false",
                 "run.recompute=all"]
    cfg = compose(overrides)
    pools = {"episodes kept": simulator._Episodes(simulator.IDLE_EPISODES), "no pool": simulator._Episodes(0)}
    seconds: dict[str, list[float]] = {way: [] for way in pools}
    results: dict[str, dict] = {}
    with tempfile.TemporaryDirectory() as out:
        run_from_config(OmegaConf.create(cfg), output_dir=Path(out) / "record")  # records the trajectory once
        for i in range(runs):
            for way, pool in pools.items():
                simulator.EPISODES = pool
                began = time.perf_counter()
                summary = run_from_config(OmegaConf.create(cfg), output_dir=Path(out) / f"{way}-{i}")
                seconds[way].append(time.perf_counter() - began)
                results[way] = {k: a.diagnostics.get("value") for k, a in summary.results.items()}
    for pool in pools.values():
        pool.clear()
    assert results["episodes kept"] == results["no pool"], results
    kept, none = (statistics.median(seconds[w]) for w in pools)
    print(f"memory_maze run (lagged, psnr + pose_error, 2 samples), median of {runs}: episodes kept {kept:.2f} s, "
          f"no pool {none:.2f} s: {kept / none:.2f}x; results equal: {results['no pool']}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--compositions", type=int, default=20)
    parser.add_argument("--maze-runs", type=int, default=3)
    parser.add_argument("--store", type=Path, default=None)
    args = parser.parse_args()
    compositions(args.compositions)
    if args.maze_runs:
        with tempfile.TemporaryDirectory() as folder:
            maze_runs(args.maze_runs, args.store or Path(folder) / "store")


if __name__ == "__main__":
    main()
