"""Can a planner reach Memory Maze's target of a given colour, planning with the exact simulator?

The measurement behind docs/memory-maze.md "Closed loop and planning" (why ``task=goal_reaching``
is not offered on this family). Run: ``python perf/maze_goal_reaching.py [--episodes 3]
[--candidates 8] [--horizon 8] [--max-steps 40]``.

The planner is ``protocol=planning``'s random shooting (sticky random plans, p_repeat 0.6) with the
oracle as the world model (the true simulator restored from a snapshot: the best any model can
do), scoring each imagined plan by what a frame shows of the goal: the largest fraction of pixels
within 60 levels of the target's colour (the coloured sphere, border excluded) along the plan,
earlier frames preferred. An episode succeeds when the agent touches the target (Memory Maze's
reward). Printed: success, real steps, simulated steps and seconds per real step.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def target_fraction(frame: np.ndarray, color: np.ndarray) -> float:
    inner = frame[2:-2, 2:-2].astype(np.int32)
    close = np.abs(inner - (np.asarray(color) * 255).astype(np.int32)).max(axis=-1) < 60
    return float(close.mean())


def episode(seed: int, candidates: int, horizon: int, max_steps: int) -> dict:
    from wfeval.benchmarks.memory_maze import simulator

    sim = simulator.make({})
    sim.reset(seed)
    rng = np.random.default_rng(seed)
    color = np.asarray(sim._observe()["target_color"])
    started, simulated = time.perf_counter(), 0
    for step in range(max_steps):
        root = sim.snapshot()
        plans = rng.integers(0, 6, size=(candidates, horizon))
        keep = rng.random((candidates, horizon)) < 0.6
        for t in range(1, horizon):
            plans[:, t] = np.where(keep[:, t], plans[:, t - 1], plans[:, t])
        scores = []
        for plan in plans:
            sim.restore(root)
            fractions = []
            for a in plan:
                out = sim.step(int(a))
                simulated += 1
                fractions.append(target_fraction(out.frame, color) if out.reward == 0 else 1.0)
            scores.append(max(f - 0.001 * k for k, f in enumerate(fractions)))
        sim.restore(root)
        out = sim.step(int(plans[int(np.argmax(scores))][0]))
        if out.reward > 0:
            sim.close()
            return {"seed": seed, "success": True, "steps": step + 1, "simulated": simulated,
                    "s_per_step": round((time.perf_counter() - started) / (step + 1), 2)}
    sim.close()
    return {"seed": seed, "success": False, "steps": max_steps, "simulated": simulated,
            "s_per_step": round((time.perf_counter() - started) / max_steps, 2)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--episodes", type=int, default=3)
    parser.add_argument("--candidates", type=int, default=8)
    parser.add_argument("--horizon", type=int, default=8)
    parser.add_argument("--max-steps", type=int, default=40)
    args = parser.parse_args()
    results = [episode(1000 + e, args.candidates, args.horizon, args.max_steps) for e in range(args.episodes)]
    for r in results:
        print(r)
    print(f"success {sum(r['success'] for r in results)}/{len(results)}; "
          f"{np.mean([r['s_per_step'] for r in results]):.2f} s per real step")


if __name__ == "__main__":
    main()
