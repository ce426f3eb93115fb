"""Memory Maze: recording time, per-step costs, a run's time, and whether two fresh recordings agree.

Run: ``python perf/maze_recording.py [--benchmarks memory_maze memory_maze_15x15 memory_maze_long]
[--model oracle] [--repeats 2] [overrides...]`` (needs ``pip install 'wfeval[maze3d]'`` and Mesa's EGL: docs/memory-maze.md).

1. **Per step** (in this process): one Memory Maze environment made and reset, then seconds per
   agent step (physics at 200 Hz for 0.25 s, then the 64×64 render), per ``render_pose`` (one
   render at any pose, the state left as it was), per ``snapshot`` and per ``restore`` (same episode);
   then seconds per step side by side with the targets' contact check in numpy (as wfeval runs it) and
   with dm_control's own Python loop, taking turns (``step_time_ratio``: numpy / dm_control, best of 3).
2. **Fresh recordings**: for each benchmark, ``--repeats`` runs of ``python -m wfeval benchmark=<b>
   model=<model>`` with the suite, each in a new process and a new store (nothing cached): the
   dataset hash of each (they must agree, and match the YAML's pin), the recording's seconds and
   frames per second (manifest ``benchmark.runtime.recording``) and the run's wall time; then the
   same command once more on the last store (the recording served by the cache).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def per_step(n: int = 60) -> dict[str, float]:
    from wfeval.benchmarks.memory_maze import simulator

    started = time.perf_counter()
    sim = simulator.make({})
    sim.reset(1)
    made = time.perf_counter() - started
    started = time.perf_counter()
    for t in range(n):
        sim.step(1 if t % 4 else 2)
    step = (time.perf_counter() - started) / n
    x, y, h = sim.pose()
    started = time.perf_counter()
    for k in range(n):
        sim.render_pose(x + 0.01 * k, y, h)
    render = (time.perf_counter() - started) / n
    started = time.perf_counter()
    snaps = [sim.snapshot() for _ in range(n)]
    snap = (time.perf_counter() - started) / n
    started = time.perf_counter()
    for s in snaps:
        sim.restore(s)
    restore = (time.perf_counter() - started) / n
    paired = contact_check_side_by_side(sim, n)
    sim.close()
    return {"make_and_reset_s": made, "step_ms": 1000 * step, "render_pose_ms": 1000 * render,
            "snapshot_ms": 1000 * snap, "restore_same_episode_ms": 1000 * restore, **paired}


def contact_check_side_by_side(sim, n: int, rounds: int = 3) -> dict[str, float]:
    """Seconds per step of the same episode (restored to its first state, then ``n`` steps) with the
    targets' contact check in numpy (``simulator._target_touched``, as wfeval runs it) and with
    dm_control's own, taking turns; the maze is built once."""
    from wfeval.benchmarks.memory_maze import simulator

    sim.reset(1)
    start = sim.snapshot()
    times: dict[str, list[float]] = {"numpy": [], "dm_control": []}
    for _ in range(rounds):
        for variant in times:
            sim.restore(start)  # the same episode: no build
            simulator._check_contacts_with_numpy(sim._composer.task)
            if variant == "dm_control":
                for target in sim._composer.task._targets:
                    del target._update_activation  # the class's method again
            started = time.perf_counter()
            for t in range(n):
                sim.step(1 if t % 4 else 2)
            times[variant].append((time.perf_counter() - started) / n)
    simulator._check_contacts_with_numpy(sim._composer.task)  # as reset left it, for whoever takes it next
    best = {k: 1000 * min(v) for k, v in times.items()}
    return {"step_ms_numpy_check": best["numpy"], "step_ms_dm_control_check": best["dm_control"],
            "step_time_ratio": best["numpy"] / best["dm_control"]}


def run(benchmark: str, model: str, store: Path, out: Path, overrides: list[str]) -> dict:
    env = {**os.environ, "WFEVAL_STORE": str(store)}
    started = time.perf_counter()
    proc = subprocess.run([sys.executable, "-m", "wfeval", f"benchmark={benchmark}", f"model={model}",
                           "run.progress=off", f"hydra.run.dir={out}", *overrides], cwd=ROOT, env=env,
                          capture_output=True, text=True)
    wall = time.perf_counter() - started
    if proc.returncode:
        raise SystemExit(f"{benchmark}: exit {proc.returncode}\n{proc.stderr[-3000:]}")
    manifest = json.loads((out / "manifest.json").read_text())
    rec = manifest["benchmark"]["runtime"]["recording"]
    return {"dataset_hash": manifest["benchmark"]["dataset_hash"], "wall_s": round(wall, 1),
            "recording_s": rec["recording_seconds"], "frames_per_s": rec["frames_per_second"],
            "recorded": rec["trajectories_recorded"], "cached": rec["trajectories_cached"],
            "pinned": (manifest.get("rules") or {}).get("evidence", {}).get("dataset_hash")}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--benchmarks", nargs="+", default=["memory_maze", "memory_maze_15x15", "memory_maze_long"])
    parser.add_argument("--model", default="oracle")
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--skip-steps", action="store_true", help="skip the per-step costs")
    parser.add_argument("overrides", nargs="*", help="more overrides for every run, e.g. 'metric=[psnr]'")
    args = parser.parse_args()
    if not args.skip_steps:
        print("per step:", json.dumps({k: round(v, 2) for k, v in per_step().items()}))
    for bench in args.benchmarks:
        with tempfile.TemporaryDirectory() as tmp:
            rows = [run(bench, args.model, Path(tmp) / f"store{i}", Path(tmp) / f"run{i}", args.overrides)
                    for i in range(args.repeats)]
            rows.append(run(bench, args.model, Path(tmp) / f"store{args.repeats - 1}", Path(tmp) / "warm", args.overrides))
        hashes = {r["dataset_hash"] for r in rows}
        for i, r in enumerate(rows):
            print(bench, "warm" if i == len(rows) - 1 else f"fresh {i + 1}", json.dumps(r))
        print(bench, "fresh recordings agree:", len(hashes) == 1, "| matches the pin:", rows[0]["pinned"] in hashes)


if __name__ == "__main__":
    main()
