"""Results of a fixed set of runs, masked of what differs between two runs of the same code.

    python perf/results_golden.py OUT_DIR              # run the set, write OUT_DIR/<case>.json
    python perf/results_golden.py --compare A B        # byte-compare two such folders

A refactoring that must not change any number runs this before and after (each in its own
checkout) and compares: every ``results.json`` of the set (the default run, a 3-model sweep,
``protocol=autoregressive``, closed loop with the random policy, ``task=goal_reaching``, Pong
with the game oracle, and a replay of the default run) with the run's id, times, paths and wall-clock measurements masked,
written as canonical JSON. Exit 1 when any case differs (the differing cases are listed).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

MASKED = {"run_id", "started_at", "finished_at", "output_dir", "trace_run_dir", "store_dir", "cwd", "argv",
          "host", "pid", "source_run", "run_dir", "created_at", "seconds", "versions", "time", "t",
          "duration_s", "wall_seconds", "path", "report"}

CASES: dict[str, list[str]] = {
    "default": [],
    "autoregressive": ["protocol=autoregressive"],
    "closed_loop": ["protocol=closed_loop", "policy=random"],
    "goal_reaching": ["task=goal_reaching"],
    "pong_game_oracle": ["benchmark=atari_pong", "model=game_oracle"],
}
SWEEP = ["-m", "model=oracle,static,random_actions"]


TIMED = ("step_latency", "real_time_factor")  # measured in seconds: differ from run to run


def mask(node):
    if isinstance(node, dict):
        return {k: ("<masked>" if k in MASKED or k.endswith(TIMED) else mask(v)) for k, v in node.items()}
    if isinstance(node, list):
        return [mask(v) for v in node]
    if isinstance(node, str) and (os.sep in node and ("outputs" in node or "/tmp" in node)):
        return "<path>"
    return node


def write_masked(results: Path, out: Path) -> None:
    document = json.loads(results.read_text(encoding="utf-8"))
    out.write_text(json.dumps(mask(document), sort_keys=True, indent=1, allow_nan=True) + "\n", encoding="utf-8")


def wfeval(args: list[str], cwd: Path, env: dict[str, str], module: str = "wfeval") -> None:
    subprocess.run([sys.executable, "-m", module, *args], cwd=cwd, env=env, check=True,
                   stdout=subprocess.DEVNULL)


def run_all(out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        env = {**os.environ, "WFEVAL_STORE": str(work / "store")}
        common = ["run.report=false", "run.progress=off"]
        for case, overrides in CASES.items():
            run_dir = work / "runs" / case
            wfeval([*overrides, *common, f"hydra.run.dir={run_dir}"], work, env)
            write_masked(run_dir / "results.json", out / f"{case}.json")
            print(case, flush=True)
        wfeval([str(work / "runs" / "default"), "--out", str(work / "replay")], work, env, module="wfeval.replay")
        write_masked(work / "replay" / "results.json", out / "replay.json")
        sweep = work / "sweep"
        wfeval([*SWEEP, *common, f"hydra.sweep.dir={sweep}"], work, env)
        for job in sorted(p for p in sweep.iterdir() if (p / "results.json").exists()):
            write_masked(job / "results.json", out / f"sweep_{job.name}.json")
        print("sweep", flush=True)


def compare(a: Path, b: Path) -> int:
    names = sorted({p.name for p in a.glob("*.json")} | {p.name for p in b.glob("*.json")})
    differ = [n for n in names if not ((a / n).exists() and (b / n).exists()
                                       and (a / n).read_bytes() == (b / n).read_bytes())]
    for name in names:
        print(f"{'DIFFERS' if name in differ else 'same   '}  {name}")
    return 1 if differ else 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--compare", action="store_true")
    args = parser.parse_args()
    if args.compare:
        return compare(*args.paths[:2])
    run_all(args.paths[0])
    return 0


if __name__ == "__main__":
    sys.exit(main())
