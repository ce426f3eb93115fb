"""Stress test of issue 32 item 16 (not in the default suite): the documented sweep, many times in a
row, beside a CPU burner.

Run: ``python perf/thread_race_stress.py [--runs 20] [--benchmark gridworld|atari_pong]
[--samples 8] [--burners N] [--work DIR]``

The sweep is docs/evaluate-your-pytorch-model.md's (``python -m wfeval -m model=learned,oracle,static,
random_actions extra_metrics=[fvd]``; ``--benchmark atari_pong``: the game's line,
``model=learned,game_oracle,static,game_random_actions``), with its samples cut to ``--samples``
(``benchmark.num_samples``; Pong: ``run.limit``). Its first job once failed on a loaded machine with
``setup() failed: AttributeError: partially initialized module 'torch' has no attribute 'cuda'``: the
overlapped scoring thread (FVD's reference features) and the learned model's ``setup()`` imported torch
at once. The model is
trained first when its checkpoint is missing (``python -m wfeval.recipes.train``, in ``--work``).
Each sweep runs in a fresh process and a fresh store (nothing is served from a cache), while
``--burners`` processes (default: one per core) spin on the CPU. A sweep passes when it exits 0,
every job wrote ``results.json`` and no output mentions ``partially initialized`` or ``setup()
failed``. Prints one line per sweep and the count; exits 1 on the first failure.
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
MODELS = {"gridworld": "learned,oracle,static,random_actions",
          "atari_pong": "learned,game_oracle,static,game_random_actions"}
SIZE = {"gridworld": "benchmark.num_samples", "atari_pong": "run.limit"}  # Pong's samples come from its trajectories


def _burn(stop) -> None:
    while not stop.is_set():
        sum(i * i for i in range(10000))


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT), env.get("PYTHONPATH", "")]).rstrip(os.pathsep)
    return env


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=20)
    parser.add_argument("--benchmark", choices=sorted(MODELS), default="gridworld")
    parser.add_argument("--samples", type=int, default=8)
    parser.add_argument("--burners", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="wfeval-race-"))
    work.mkdir(parents=True, exist_ok=True)
    checkpoint = work / "outputs" / "recipes" / args.benchmark / "model.pt"
    if not checkpoint.is_file():
        print(f"training the learned model for {args.benchmark} (once) ...", flush=True)
        subprocess.run([sys.executable, "-m", "wfeval.recipes.train", f"benchmark={args.benchmark}"], cwd=work,
                       env=_env(), check=True, capture_output=True, text=True)
    stop = multiprocessing.Event()
    burners = [multiprocessing.Process(target=_burn, args=(stop,), daemon=True) for _ in range(args.burners)]
    for burner in burners:
        burner.start()
    passed = 0
    try:
        for i in range(args.runs):
            sweep = work / f"sweep{i:03d}"
            began = time.perf_counter()
            done = subprocess.run(
                [sys.executable, "-m", "wfeval", "-m", f"benchmark={args.benchmark}", f"model={MODELS[args.benchmark]}",
                 "extra_metrics=[fvd]", f"{SIZE[args.benchmark]}={args.samples}", "run.progress=off",
                 f"run.store_dir={sweep / 'store'}", f"hydra.sweep.dir={sweep}"],
                cwd=work, env=_env(), capture_output=True, text=True)
            text = done.stdout + done.stderr
            jobs = sorted(sweep.glob("*/results.json"))
            ok = (done.returncode == 0 and len(jobs) == len(MODELS[args.benchmark].split(","))
                  and "partially initialized" not in text and "setup() failed" not in text)
            print(f"sweep {i + 1}/{args.runs}: {'ok' if ok else 'FAILED'} ({len(jobs)} jobs, "
                  f"{time.perf_counter() - began:.1f} s, exit {done.returncode})", flush=True)
            if not ok:
                print(text[-4000:])
                break
            passed += 1
    finally:
        stop.set()
        for burner in burners:
            burner.join(timeout=5)
    print(f"{passed} of {args.runs} sweeps passed in a row beside {args.burners} CPU burner(s)")
    return 0 if passed == args.runs else 1


if __name__ == "__main__":
    raise SystemExit(main())
