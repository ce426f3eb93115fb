"""``pose_error`` on Memory Maze: this tree against the branch point, side by side, same samples.

Run: ``python perf/maze_pose_speed.py [--before REV] [--trajectories 1] [--limit 4] [--stride 4]
[--models static oracle noisy] [--store DIR]`` (needs ``wfeval[maze3d]`` and Mesa's EGL: docs/memory-maze.md).

"Before" is ``git archive REV`` (default: the merge base of this branch with ``main``) unpacked in a
temporary folder. Both trees score the same generated videos, in their own process, with their own
``PoseError`` (``metric.pose_error.stride``), one sample after another on one thread, the
recordings shared (one store: both trees record byte-identical frames): ``static`` (the last
context frame repeated), ``oracle`` (the reference itself) and ``noisy`` (the reference with
seeded Gaussian noise of σ = 10: every frame a search, as for any model whose frames are not
exact). Printed per tree and model: seconds (wall, scoring only, the maze builds included), renders,
the mean pose error and its largest per-frame difference between the trees.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

DRIVER = r"""
import json, sys, time
sys.path.insert(0, sys.argv[1])
import numpy as np
sys.path.insert(0, sys.argv[1] + "/tests")
from conftest import compose
from wfeval.api import GenerationResult
from wfeval.benchmarks.memory_maze.pose import PoseError
from wfeval.pipeline import build
from wfeval.storage.artifacts import ArtifactStore, read_array
store_dir, trajectories, limit, stride, models = sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), int(sys.argv[5]), sys.argv[6].split(",")
# the samples only (the metric is built below, from the tree's own class; an editable install
# composes from the installed checkout's conf/, whatever the tree)
cfg = compose(["benchmark=memory_maze", f"benchmark.num_trajectories={trajectories}", "metric=[psnr]"])
store = ArtifactStore(store_dir)
requests = build.build_benchmark(cfg).requests(store=store, task=build.build_task(cfg), protocol=build.build_protocol(cfg))[:limit]
out = {}
for model in models:
    metric, rows, began = PoseError(stride=stride), [], time.perf_counter()
    for i, request in enumerate(requests):
        ref = read_array(request.references["video"])
        video = {"static": np.repeat(ref[:1], len(ref), axis=0), "oracle": ref,
                 "noisy": np.clip(ref + np.random.default_rng(i).normal(0, 10, ref.shape), 0, 255).astype(np.uint8)}[model]
        row = metric.compute_sample(request, GenerationResult(sample_id=request.sample_id,
                                    artifacts={"generated_video": store.put_array(video, kind="video")}))
        rows.append({"value": row.raw_value, "per_frame": list(row.components["per_frame"]),
                     "renders": row.components["renders"]})
    seconds = time.perf_counter() - began
    metric.close()
    out[model] = {"seconds": round(seconds, 2), "renders": sum(r["renders"] for r in rows),
                  "value": float(np.mean([r["value"] for r in rows])), "per_frame": [r["per_frame"] for r in rows]}
print("RESULT " + json.dumps(out))
"""


def unpack(rev: str, into: Path) -> Path:
    archive = into / "before.tar"
    subprocess.run(["git", "-C", str(ROOT), "archive", "-o", str(archive), rev], check=True)
    with tarfile.open(archive) as tar:
        tar.extractall(into / "before", filter="data")
    return into / "before"


def measure(tree: Path, store: Path, args: argparse.Namespace) -> dict:
    began = time.perf_counter()
    proc = subprocess.run([sys.executable, "-c", DRIVER, str(tree), str(store), str(args.trajectories),
                           str(args.limit), str(args.stride), ",".join(args.models)],
                          capture_output=True, text=True, cwd=tree)
    if proc.returncode != 0:
        raise SystemExit(f"{tree}: exit {proc.returncode}\n{proc.stderr[-3000:]}")
    line = next(x for x in proc.stdout.splitlines() if x.startswith("RESULT "))
    return {"process_seconds": round(time.perf_counter() - began, 1), **json.loads(line[7:])}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before", default=None, help="git revision of 'before' (default: merge base with main)")
    parser.add_argument("--trajectories", type=int, default=1)
    parser.add_argument("--limit", type=int, default=4)
    parser.add_argument("--stride", type=int, default=4)
    parser.add_argument("--models", nargs="+", default=["static", "oracle", "noisy"])
    parser.add_argument("--store", type=Path, default=None, help="recording store (default: a temporary one)")
    args = parser.parse_args()
    rev = args.before or subprocess.run(["git", "-C", str(ROOT), "merge-base", "HEAD", "main"], check=True,
                                        capture_output=True, text=True).stdout.strip()
    with tempfile.TemporaryDirectory() as tmp:
        store = args.store or Path(tmp) / "store"
        before_tree = unpack(rev, Path(tmp))
        measure(ROOT, store, argparse.Namespace(**{**vars(args), "models": ["oracle"], "limit": 1}))  # record once
        after = measure(ROOT, store, args)
        before = measure(before_tree, store, args)
    print(f"pose_error, memory_maze, {args.trajectories} maze(s), {args.limit} samples, stride {args.stride}; "
          f"before = {rev[:10]}")
    print(f"{'model':8} {'before s':>9} {'after s':>8} {'speed-up':>8} {'renders before':>15} {'after':>6} "
          f"{'value before':>12} {'after':>7} {'max |diff| per frame':>21}")
    for model in args.models:
        b, a = before[model], after[model]
        diff = max((abs(x - y) for pb, pa in zip(b["per_frame"], a["per_frame"]) for x, y in zip(pb, pa)), default=0.0)
        print(f"{model:8} {b['seconds']:9.2f} {a['seconds']:8.2f} {b['seconds'] / max(a['seconds'], 1e-9):7.1f}x "
              f"{b['renders']:15d} {a['renders']:6d} {b['value']:12.4f} {a['value']:7.4f} {diff:21.4f}")


if __name__ == "__main__":
    main()
