"""Planning at speed: ``task=goal_reaching`` wall time, this checkout against a baseline, same successes.

Run: ``python perf/planning_speed.py [--baseline CHECKOUT] [--models oracle] [--samples 32] [--rounds 1]
[--override KEY=VALUE ...]`` (e.g. ``--models learned --override model.checkpoint=/abs/model.pt``: the
learned model's checkpoint, written by ``python -m wfeval.recipes.train``, by absolute path)

Each (side, model) is one ``python -m wfeval task=goal_reaching model=<m>`` process (``PYTHONPATH`` =
that side's checkout; a baseline made with ``git archive`` of an older commit), in its own empty
store and run folder, the sides alternating ``--rounds`` times. Printed per model: the wall seconds
of each side's process and of its planning (the generate phase, from ``events.jsonl``; the rest
is start-up, scoring and files), medians over rounds, the ratios baseline / this, and whether the
two sides' ``goal_success`` rows (sample → success, steps) are identical.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(Path(__file__).resolve().parent))
from _run_events import first_events  # noqa: E402 - perf/ is not a package


def run(checkout: Path, model: str, samples: int, work: Path, overrides: list[str]) -> tuple[float, dict]:
    run_dir = work / "run"
    env = {**os.environ, "PYTHONPATH": str(checkout), "OMP_NUM_THREADS": os.environ.get("OMP_NUM_THREADS", "1")}
    argv = [sys.executable, "-m", "wfeval", "task=goal_reaching", f"model={model}", f"benchmark.num_samples={samples}",
            "run.progress=off", "run.report=false", f"run.store_dir={work / 'store'}", f"hydra.run.dir={run_dir}",
            *overrides]
    began = time.perf_counter()
    proc = subprocess.run(argv, cwd=work, env=env, capture_output=True, text=True)
    seconds = time.perf_counter() - began
    if proc.returncode:
        raise SystemExit(f"{checkout}: {' '.join(argv[2:])} failed:\n{proc.stderr[-2000:]}")
    phases = first_events(run_dir)
    generate = phases["phase_finished:generate"]["t"] - phases["phase_started:generate"]["t"]
    outcomes: dict = {"generate_seconds": generate}
    for line in (run_dir / "metrics.jsonl").read_text().splitlines():
        row = json.loads(line)
        if row["metric_id"] in ("goal_success", "steps_to_goal"):
            outcomes[(row["sample_id"], row["metric_id"])] = row.get("raw_value")
    return seconds, outcomes


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline", type=Path, default=None, help="an older checkout (git archive) to compare with")
    parser.add_argument("--models", default="oracle")
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=1)
    parser.add_argument("--override", action="append", default=[], metavar="KEY=VALUE",
                        help="an override for both sides (e.g. model.checkpoint=/abs/path/model.pt)")
    args = parser.parse_args()
    sides = {"this": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    for model in args.models.split(","):
        times: dict[str, list[float]] = {s: [] for s in sides}
        planning: dict[str, list[float]] = {s: [] for s in sides}
        outcomes: dict[str, dict] = {}
        for _ in range(args.rounds):
            for side, checkout in sides.items():
                with tempfile.TemporaryDirectory() as tmp:
                    seconds, outcomes[side] = run(checkout, model, args.samples, Path(tmp), args.override)
                times[side].append(seconds)
                planning[side].append(outcomes[side].pop("generate_seconds"))
        medians = {s: statistics.median(t) for s, t in times.items()}
        plan = {s: statistics.median(t) for s, t in planning.items()}
        successes = sum(1 for (_, m), v in outcomes["this"].items() if m == "goal_success" and v)
        line = (f"{model}: this {medians['this']:.1f} s (planning phase {plan['this']:.1f} s), "
                f"{successes}/{args.samples} goals reached")
        if "baseline" in sides:
            same = outcomes["this"] == outcomes["baseline"]
            line += (f"; baseline {medians['baseline']:.1f} s (planning phase {plan['baseline']:.1f} s); "
                     f"baseline/this {medians['baseline'] / medians['this']:.2f}x "
                     f"(planning phase {plan['baseline'] / plan['this']:.2f}x); same successes and steps: {same}")
        print(line, flush=True)


if __name__ == "__main__":
    main()
