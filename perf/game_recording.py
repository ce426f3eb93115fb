"""Recording throughput of the game benchmarks, and the share of a full run spent recording vs scoring.

Run: ``python perf/game_recording.py [--benchmarks atari_pong crafter] [--trajectories 4]
[--model static]`` (needs ``pip install 'wfeval[games]'``).

1. **Throughput**: each benchmark records ``--trajectories`` trajectories with the cache off into
   a fresh store, in this process; printed: rendered frames per second (one frame per agent step,
   after resizing and storing), emulator frames per second for Atari (× frameskip), and seconds
   per trajectory. Atari is shown at 64×64 and at its native 210×160.
2. **Share of a full run**: ``python -m wfeval benchmark=<b> model=<model>`` with the benchmark's
   metric suite, run twice as a user would (a fresh store, then the same store again: the
   recording cache serves the second run). From the run's own trace (events.jsonl, manifest.json):
   seconds recording (benchmark.runtime.recording), generating, scoring, and the rest (build,
   aggregation, writing), each as a share of the run (run_started → run_finished; the process
   start-up and imports are shown separately as ``wall``).
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

DEFAULT_BENCHMARKS = ("atari_pong", "atari_breakout", "atari_boxing", "crafter")


def build(benchmark: str, overrides: list[str]):
    from hydra import compose, initialize_config_module

    from wfeval.config import register_schemas
    from wfeval.pipeline import build as builder

    register_schemas()
    with initialize_config_module("wfeval.conf", version_base="1.3"):
        cfg = compose(config_name="config", overrides=[f"benchmark={benchmark}", *overrides])
    return builder.build_benchmark(cfg)


def throughput(benchmark: str, trajectories: int, extra: list[str]) -> dict:
    from wfeval.storage.artifacts import ArtifactStore

    bench = build(benchmark, [f"benchmark.num_trajectories={trajectories}", "benchmark.cache=false", *extra])
    with tempfile.TemporaryDirectory(prefix="wfeval-rec-") as tmp:
        store = ArtifactStore(tmp)
        bench.simulator()  # start-up (ROM load, textures) is not throughput
        started = time.perf_counter()
        for index in range(trajectories):
            bench.record(index, store)
        seconds = time.perf_counter() - started
    frames = trajectories * (bench.n_steps + 1)
    frameskip = int(bench.env.get("frameskip", 1))
    return {"frames": frames, "seconds": seconds, "fps": frames / seconds,
            "emulator_fps": frames * frameskip / seconds if frameskip > 1 else None,
            "per_trajectory": seconds / trajectories}


def read_jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines() if line.strip()]


def full_run(benchmark: str, model: str, store: Path, run_dir: Path, trajectories: int) -> dict:
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    args = [sys.executable, "-m", "wfeval", f"benchmark={benchmark}", f"model={model}", "run.progress=off",
            f"run.store_dir={store}", f"hydra.run.dir={run_dir}", f"benchmark.num_trajectories={trajectories}"]
    started = time.perf_counter()
    done = subprocess.run(args, cwd=ROOT, env=env, capture_output=True, text=True)
    wall = time.perf_counter() - started
    if done.returncode != 0:
        raise SystemExit(f"{' '.join(args)} failed:\n{done.stderr[-2000:]}")
    events = read_jsonl(run_dir / "events.jsonl")
    at = {}
    for event in events:
        key = event["event"] + ("/" + event["phase"] if "phase" in event else "")
        at.setdefault(key, event)
    total = at["run_finished"]["t"] - at["run_started"]["t"]
    generate = at["phase_finished/generate"]["t"] - at["phase_started/generate"]["t"]
    score = at["phase_finished/score"]["t"] - at["phase_started/score"]["t"]
    manifest = json.loads((run_dir / "manifest.json").read_text())
    recording = manifest["benchmark"]["runtime"]["recording"]["recording_seconds"]
    return {"wall": wall, "total": total, "recording": recording, "generate": generate, "score": score,
            "other": max(total - recording - generate - score, 0.0), "samples": manifest["benchmark"]["n_samples"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--benchmarks", nargs="+", default=list(DEFAULT_BENCHMARKS))
    parser.add_argument("--trajectories", type=int, default=8, help="trajectories per benchmark (4 windows each)")
    parser.add_argument("--model", default="static", help="model of the full runs (static, game_oracle, ...)")
    args = parser.parse_args()

    print(f"recording throughput ({args.trajectories} trajectories, cache off, one frame per agent step)")
    print(f"{'benchmark':<24} {'frames':>7} {'seconds':>8} {'frames/s':>9} {'emulator frames/s':>18} "
          f"{'s/trajectory':>13}")
    for name in args.benchmarks:
        variants = [("", [])]
        if name.startswith("atari_"):
            variants.append((" native", ["benchmark.resize=null"]))
        for label, extra in variants:
            r = throughput(name, args.trajectories, extra)
            emu = f"{r['emulator_fps']:.0f}" if r["emulator_fps"] else "-"
            print(f"{name + label:<24} {r['frames']:>7} {r['seconds']:>8.2f} {r['fps']:>9.0f} {emu:>18} "
                  f"{r['per_trajectory']:>13.3f}", flush=True)

    print(f"\nshare of a full run (model={args.model}, the benchmark's metric suite)")
    print(f"{'benchmark':<16} {'run':<5} {'samples':>7} {'wall s':>7} {'run s':>6} {'recording':>15} "
          f"{'generating':>15} {'scoring':>15} {'other':>15}")
    with tempfile.TemporaryDirectory(prefix="wfeval-run-") as tmp:
        for name in args.benchmarks:
            store = Path(tmp) / f"store-{name}"
            for run in ("cold", "warm"):
                r = full_run(name, args.model, store, Path(tmp) / f"{name}-{run}", args.trajectories)
                cells = " ".join(f"{r[k]:>7.2f} ({r[k] / r['total']:>4.0%})" for k in ("recording", "generate", "score",
                                                                                     "other"))
                print(f"{name:<16} {run:<5} {r['samples']:>7} {r['wall']:>7.2f} {r['total']:>6.2f} {cells}", flush=True)


if __name__ == "__main__":
    main()
