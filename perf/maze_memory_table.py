"""The baselines on ``task=memory`` on Memory Maze (docs/memory-maze.md): one table from real runs.

Run: ``python perf/maze_memory_table.py [--benchmark memory_maze] [--trajectories 1] [--gaps 2,4,8,16]
[--models oracle,forgetful,...] [--out table.md]`` (needs ``pip install 'wfeval[maze3d]'`` and Mesa's
EGL; offline, CPU). Each model runs ``task=memory`` on the benchmark's first ``trajectories`` mazes
(all their samples), on the benchmark's own gaps unless ``--gaps`` says otherwise. Columns:
revisit_error with its 95% interval, its curve per gap bucket (mean over samples, uint8 levels),
reversibility_error, and pose_error at the revisit frames (cells). ``—``: not measured (no valid
sample).
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))  # perf/ is not a package
from _tables import cell, run_results  # noqa: E402

MODELS = ("oracle", "forgetful", "static", "random_actions", "lagged", "noisy", "blur")


def table(benchmark: str = "memory_maze", trajectories: int = 1, gaps: list[int] | None = None,
          models: tuple[str, ...] = MODELS, root: Path | None = None, store: str | None = None,
          limit: int | None = None) -> str:
    """The Markdown table (a row per model), each row from a real run; the last line gives the times."""
    root = Path(root or tempfile.mkdtemp(prefix="wfeval-maze-memory-"))
    base = [f"run.store_dir={store or root / 'store'}", "run.progress=off", "run.report=false", "task=memory",
            f"benchmark={benchmark}", f"benchmark.num_trajectories={trajectories}",
            "metric=[revisit_error,reversibility_error,pose_error]"]
    if limit:
        base.append(f"run.limit={limit}")
    if gaps:
        base.append(f"task.data.memory.gaps=[{','.join(str(g) for g in gaps)}]")
    rows, seconds = {}, {}
    for model in models:
        started = time.perf_counter()
        rows[model] = run_results([*base, f"model={model}"], root / model)
        seconds[model] = time.perf_counter() - started
    buckets = sorted({int(b) for r in rows.values() for b in
                      ((r.get("revisit_error") or {}).get("diagnostics") or {}).get("curve", {})})
    head = ["model", "revisit_error", *[f"gap ≤ {b}" for b in buckets], "reversibility_error",
            "pose_error at revisits (cells)"]
    lines = ["| " + " | ".join(head) + " |", "| " + " | ".join("---" for _ in head) + " |"]
    for model, results in rows.items():
        curve = ((results.get("revisit_error") or {}).get("diagnostics") or {}).get("curve") or {}
        per_gap = [f"{curve[str(b)]['mean']:.2f}" if str(b) in curve else "—" for b in buckets]
        lines.append("| " + " | ".join([model, cell(results, "revisit_error"), *per_gap,
                                         cell(results, "reversibility_error"), cell(results, "pose_error", 3)]) + " |")
    n = next(iter(rows.values()), {}).get("revisit_error", {}).get("n_total")
    lines.append("")
    lines.append(f"{benchmark}, {trajectories} maze(s), {n} samples; wall seconds per model: "
                 + ", ".join(f"{m} {s:.0f}" for m, s in seconds.items()))
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmark", default="memory_maze")
    parser.add_argument("--trajectories", type=int, default=1)
    parser.add_argument("--gaps", default=None, help="comma-separated steps (default: the benchmark's own)")
    parser.add_argument("--models", default=",".join(MODELS))
    parser.add_argument("--store", default=None, help="an artifact store to reuse (recordings cached)")
    parser.add_argument("--limit", type=int, default=None, help="the first samples only (run.limit)")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args()
    gaps = [int(g) for g in args.gaps.split(",")] if args.gaps else None
    text = table(args.benchmark, args.trajectories, gaps, tuple(args.models.split(",")), store=args.store,
                 limit=args.limit)
    print(text)
    if args.out:
        args.out.write_text(text, encoding="utf-8")


if __name__ == "__main__":
    main()
