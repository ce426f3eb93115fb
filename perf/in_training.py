"""The fixed cost of ``wfeval.evaluate`` inside a training loop, over the cost of generating and scoring.

Run: ``python perf/in_training.py [--samples 32] [--calls 8] [--rounds 2] [--baseline CHECKOUT] [--profile]
[--this-override KEY=VALUE]``

A training loop calls ``wfeval.evaluate(model=net, benchmark="gridworld", model_version=step)``
every N steps on 32 gridworld samples with the benchmark's default metrics; the model's weights
have changed since the last call, so every call generates and scores all samples (nothing comes
from the generation or metric cache but the benchmark's references). Each side runs in its own
process (``PYTHONPATH`` = that checkout; a baseline made with ``git archive`` needs its
``wfeval/conf`` linked to ``conf``): one warm-up call (imports, first composition), then
``--calls`` warm calls, each measured as

* **T_call**: the whole ``wfeval.evaluate`` call (wall and CPU seconds of the process);
* **T_generate**: the model's own ``generate`` time inside that call (wall, and CPU of its thread);
* **T_score**: the same samples scored again by the pipeline's scorer alone
  (``wfeval.pipeline.score.score_all`` over the run's stored pairs, the same metric objects, no
  result cache): what computing the metrics costs;
* **overhead** = T_call − T_generate − T_score: composition, planning (benchmark, metrics, model
  identity), the store, the run folder's files, aggregation and the statistics;

median over the calls of all rounds, and a breakdown of the last call from its ``events.jsonl``.
The sides alternate ``--rounds`` times. ``--profile`` prints the top of a cProfile of one warm call
(``PROFILE_SORT=tottime`` orders it by time spent in each function itself).
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


class TrainedModel:
    """Stands in for a network under training: a fixed numpy "network" whose output depends on the
    step it was evaluated at (the initial frame, repeated, with noise seeded by the step)."""

    name = "in_training"

    def __init__(self) -> None:
        self.step, self.seconds, self.cpu_seconds = 0, 0.0, 0.0

    def generate(self, requests):
        import numpy as np

        from wfeval.models.base import actions_of, initial_frame

        started, cpu = time.perf_counter(), time.thread_time()
        out = []
        for request in requests:
            frame = initial_frame(request)
            n = len(actions_of(request)) + 1
            rng = np.random.default_rng((self.step, int(request.generation.get("seed") or 0)))
            video = np.repeat(frame[None], n, axis=0).astype(np.int16) + rng.integers(-6, 7, (n, *frame.shape))
            out.append({"generated_video": np.clip(video, 0, 255).astype(np.uint8)})
        self.seconds += time.perf_counter() - started
        self.cpu_seconds += time.thread_time() - cpu  # this thread's CPU: the model's own work
        return out


def _score_alone(run_dir: Path, cfg_overrides: list[str]) -> tuple[float, float]:
    """Wall and CPU seconds of scoring the run's stored pairs with freshly built metrics, no cache."""
    from hydra import compose, initialize_config_module

    from wfeval.config.run_config import RunConfig
    from wfeval.pipeline import build
    from wfeval.pipeline.score import score_all
    from wfeval.pipeline.spool import stored_pairs

    with initialize_config_module("wfeval.conf", version_base="1.3"):
        cfg = RunConfig.resolve(compose(config_name="config", overrides=cfg_overrides))
        metrics = build.build_metrics(build.metric_nodes(cfg), device=cfg.run.device)
    pairs = list(stored_pairs(run_dir / "generations.jsonl"))
    wall, cpu = time.perf_counter(), time.process_time()
    score_all(metrics, pairs, done={}, on_result=lambda row, reused: None, cache=None)
    return time.perf_counter() - wall, time.process_time() - cpu


def _phases(run_dir: Path) -> dict[str, float]:
    at = {key: event["t"] for key, event in first_events(run_dir).items()}
    marks = [("plan", "run_started", "phase_started:generate"),
             ("generate", "phase_started:generate", "phase_finished:generate"),
             ("score", "phase_started:score", "phase_finished:score"),
             ("aggregate+write", "phase_started:aggregate", "run_finished")]
    return {name: round(at[b] - at[a], 3) for name, a, b in marks if a in at and b in at}


def worker(args: argparse.Namespace) -> None:
    import wfeval

    work = Path(args.work)
    overrides = [f"benchmark.num_samples={args.samples}", f"run.store_dir={work / 'store'}", *args.override]
    model = TrainedModel()
    rows = []
    profile = None
    for call in range(args.calls + 1):
        model.step, model.seconds, model.cpu_seconds = call + 1000 * args.round, 0.0, 0.0
        run_dir = work / "runs" / f"round{args.round}-call{call}"  # a fresh folder per call of every round
        if args.profile and call == args.calls:
            import cProfile

            profile = cProfile.Profile()
            profile.enable()
        wall, cpu = time.perf_counter(), time.process_time()
        results = wfeval.evaluate(model=model, benchmark="gridworld", overrides=overrides, run_dir=run_dir,
                                  model_version=model.step)
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        if profile is not None:
            profile.disable()
        assert results.generated == args.samples, (results.generated, results.cached)
        if call == 0:
            first = {"wall": round(wall, 3), "cpu": round(cpu, 3)}
            continue
        score_wall, score_cpu = _score_alone(run_dir, ["model=python", "benchmark=gridworld", *overrides])
        rows.append({"wall": wall, "cpu": cpu, "generate": model.seconds, "generate_cpu": model.cpu_seconds,
                     "score_wall": score_wall, "score_cpu": score_cpu,
                     "overhead_wall": wall - model.seconds - score_wall,
                     "overhead_cpu": cpu - model.cpu_seconds - score_cpu, "phases": _phases(run_dir)})
    print(json.dumps({"first_call": first, "calls": rows,
                      "values": {k: v.value for k, v in results.items()}}))
    if profile is not None:
        import pstats

        order = os.environ.get("PROFILE_SORT", "cumulative")
        pstats.Stats(profile, stream=sys.stderr).sort_stats(order).print_stats(45)


def _side(code: Path, args: argparse.Namespace, work: Path, round_: int, overrides: list[str]) -> dict:
    env = {**os.environ, "PYTHONPATH": str(code), "WFEVAL_CACHE": str(work / "cache")}
    cmd = [sys.executable, __file__, "--worker", "--work", str(work), "--samples", str(args.samples),
           "--calls", str(args.calls), "--round", str(round_)] + (["--profile"] if args.profile else []) \
        + [f"--override={o}" for o in overrides]
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, cwd=work)
    if done.returncode:
        raise SystemExit(done.stderr[-4000:])
    if args.profile:
        print(done.stderr[-9000:], file=sys.stderr)
    return json.loads(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--calls", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--baseline", type=Path, default=None)
    parser.add_argument("--profile", action="store_true")
    parser.add_argument("--this-override", action="append", default=[], metavar="KEY=VALUE",
                        help="an override for this checkout's calls only (e.g. run.overlap=false)")
    parser.add_argument("--override", action="append", default=[], help=argparse.SUPPRESS)
    parser.add_argument("--worker", action="store_true", help=argparse.SUPPRESS)
    parser.add_argument("--work", default=None, help=argparse.SUPPRESS)
    parser.add_argument("--round", type=int, default=0, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args)
        return
    sides = {"this": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    collected: dict[str, list] = {name: [] for name in sides}
    values: dict[str, dict] = {}
    firsts: dict[str, list] = {name: [] for name in sides}
    load = [round(os.getloadavg()[0], 1)]
    with tempfile.TemporaryDirectory() as tmp:
        for round_ in range(args.rounds):
            for name, code in (reversed(sides.items()) if round_ % 2 else sides.items()):
                work = Path(tmp) / name
                work.mkdir(exist_ok=True)
                out = _side(code, args, work, round_, args.this_override if name == "this" else [])
                collected[name] += out["calls"]
                firsts[name].append(out["first_call"])
                values.setdefault(name, {})[round_] = out["values"]
                load.append(round(os.getloadavg()[0], 1))
    report = {"samples": args.samples, "calls_per_round": args.calls, "rounds": args.rounds, "load": load}
    for name, rows in collected.items():
        med = {k: round(statistics.median(r[k] for r in rows), 3)
               for k in ("wall", "cpu", "generate", "generate_cpu", "score_wall", "score_cpu", "overhead_wall",
                         "overhead_cpu")}
        phases = {k: round(statistics.median(r["phases"].get(k, 0.0) for r in rows), 3) for k in rows[-1]["phases"]}
        report[name] = {**med, "phases": phases, "first_call": firsts[name]}
    if "baseline" in sides:
        report["same_values"] = values["this"] == values["baseline"]
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
