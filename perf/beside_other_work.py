"""A small torch model's ``generate`` inside ``wfeval.evaluate`` beside a second evaluation, against the
bare loop beside the same evaluation (issue 37 item 4).

Run: ``python perf/beside_other_work.py [--rounds 3] [--samples 32] [--baseline REV] [--this REV] [--no-background]
[--realistic]``

The model: a two-layer conv net (3→16→3 channels, 3×3, torch on the CPU with the caller's thread
settings) that steps each sample's 64×64 initial frame once per action (16 forward passes a sample,
512 for the default 32 samples), as a user's world model inside a training loop would. Measured, in
a fresh process each, the sides alternating ``--rounds`` times:

* **bare**: the same forward passes on the same frames in a plain loop (no wfeval);
* **baseline** / **this**: ``wfeval.evaluate(model=net, model_version=<round>)`` on gridworld with its
  default metrics (``run.overlap=auto``, the default), through a ``git archive`` of ``--baseline``
  (default ``c1c936d``, before this round) and through this checkout: the model's own time inside
  ``generate`` (wall), the whole call, and whether ``run.overlap=auto`` overlapped scoring with it.

``--realistic``: instead, the realistic run of ``perf/realistic_run.py`` (h264 Pong clips at 256×256,
``model=precomputed``, ``metric=[psnr,ssim,flicker,fvd]``; ``--samples`` of them): its bare script, and
``python -m wfeval`` cold (empty store and feature cache) through the baseline and this checkout, each
beside the same second evaluation; wall seconds and the ratio to the bare script.

The second evaluation, unless ``--no-background``: ``python -m wfeval`` on 128 gridworld samples with
``metric=[psnr,ssim,flicker,fvd]`` and an empty store, started again whenever it ends (decoding,
torch threads and file I/O, as another user's evaluation on the same machine). Printed: the medians
and the ratios generate-in-wfeval / bare, with the load average.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tarfile
import tempfile
import threading
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]

WORKER = r'''
import json, sys, time
import numpy as np
import torch

torch.manual_seed(0)
net = torch.nn.Sequential(torch.nn.Conv2d(3, 16, 3, padding=1), torch.nn.ReLU(), torch.nn.Conv2d(16, 3, 3, padding=1))


def step_frames(frame, steps):
    x = torch.from_numpy(frame).permute(2, 0, 1)[None].float() / 255.0
    out = [frame]
    with torch.inference_mode():
        for _ in range(steps):
            x = (x + 0.1 * net(x)).clamp(0, 1)
            out.append((x[0].permute(1, 2, 0) * 255).round().to(torch.uint8).numpy())
    return np.stack(out)


class ConvModel:
    name = "tiny_conv"

    def __init__(self):
        self.seconds = 0.0

    def generate(self, requests):
        from wfeval.models.base import actions_of, initial_frame
        started = time.perf_counter()
        out = [{"generated_video": step_frames(initial_frame(r), len(actions_of(r)))} for r in requests]
        self.seconds += time.perf_counter() - started
        return out


mode, samples, work, version = sys.argv[1], int(sys.argv[2]), sys.argv[3], int(sys.argv[4])
rng = np.random.default_rng(version)
if mode == "bare":
    frames = [rng.integers(0, 256, (64, 64, 3), dtype=np.uint8) for _ in range(samples)]
    started = time.perf_counter()
    for frame in frames:
        step_frames(frame, 16)
    print(json.dumps({"generate": time.perf_counter() - started, "call": time.perf_counter() - started}))
else:
    import wfeval
    model = ConvModel()
    started = time.perf_counter()
    wfeval.evaluate(model=model, model_version=version, run_dir=f"{work}/run-{mode}-{version}",
                    overrides=[f"benchmark.num_samples={samples}", f"run.store_dir={work}/store-{mode}",
                               "run.progress=off", "run.report=false"])
    call = time.perf_counter() - started
    events = [json.loads(line) for line in open(f"{work}/run-{mode}-{version}/events.jsonl")]
    score = [e for e in events if e["event"] == "phase_finished" and e.get("phase") == "score"][0]
    print(json.dumps({"generate": model.seconds, "call": call, "overlapped": score.get("overlapped"),
                      "choice": score.get("overlap_choice")}))
'''


def unpack(rev: str, into: Path) -> Path:
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev], check=True,
                             capture_output=True).stdout
    into.mkdir()
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    (into / "wfeval" / "conf").symlink_to(into / "conf", target_is_directory=True)
    return into


class Background:
    """The second evaluation, restarted whenever it ends, until stopped."""

    def __init__(self, work: Path):
        self.work, self.stop, self.runs = work, threading.Event(), 0
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def _loop(self) -> None:
        while not self.stop.is_set():
            run = self.work / f"background-{self.runs}"
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "wfeval", "benchmark.num_samples=128", "metric=[psnr,ssim,flicker,fvd]",
                 f"run.store_dir={run}/store", f"hydra.run.dir={run}/run", "run.progress=off", "run.report=false"],
                cwd=ROOT, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.proc.wait()
            self.runs += 1

    def __enter__(self) -> "Background":
        self.thread.start()
        time.sleep(5)  # under way before the first measurement
        return self

    def __exit__(self, *exc) -> None:
        self.stop.set()
        self.proc.kill()
        self.thread.join()
        self.proc.wait()


def measure(side: str, tree: Path, samples: int, work: Path, version: int) -> dict:
    proc = subprocess.run([sys.executable, "-c", WORKER, side, str(samples), str(work), str(version)],
                          cwd=tree, capture_output=True, text=True, timeout=1800,
                          env={**os.environ, "PYTHONPATH": str(tree), "WFEVAL_CACHE": str(work / f"cache-{side}")})
    if proc.returncode:
        sys.exit(f"{side} failed:\n{proc.stderr[-3000:]}")
    return json.loads(proc.stdout.strip().splitlines()[-1])


def realistic(trees: dict[str, Path], samples: int, rounds: int, work: Path, background: bool) -> None:
    sys.path.insert(0, str(ROOT / "perf"))
    import realistic_run as rr  # perf/ is not a package

    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    env.pop("WFEVAL_STORE", None)
    data, gen = rr.build_workload(work / "workload", samples, env)
    script = work / "bare.py"
    script.write_text(rr.BARE)
    seconds: dict[str, list[float]] = {side: [] for side in trees}
    loads = [os.getloadavg()[0]]
    with (Background(work) if background else _Nothing()):
        for run in range(rounds):
            for side, tree in trees.items():
                if side == "bare":
                    wall, _, _ = rr.timed([sys.executable, str(script), str(data), str(gen), "auto"], env=env)
                else:
                    folder = work / f"{side}-{run}"
                    wall, _, _ = rr.timed(rr.wfeval_argv(data, gen, folder / "run", folder / "features"), cwd=tree,
                                          env={**env, "PYTHONPATH": str(tree), "WFEVAL_STORE": str(folder / "store"),
                                               "WFEVAL_CACHE": str(work / f"cache-{side}")})
                seconds[side].append(wall)
                loads.append(os.getloadavg()[0])
                print(f"  round {run} {side}: {wall:.1f} s", flush=True)
    bare = statistics.median(seconds["bare"])
    print(f"\nrealistic run, {samples} clips; load average {min(loads):.1f}–{max(loads):.1f} on {os.cpu_count()} CPUs; "
          f"{'beside' if background else 'without'} a second evaluation; median of {rounds}\n")
    print("| side | wall | / bare |")
    print("| --- | --- | --- |")
    for side in trees:
        print(f"| {side} | {statistics.median(seconds[side]):.1f} s | {statistics.median(seconds[side]) / bare:.2f}× |")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=3)
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--baseline", default="c1c936d")
    parser.add_argument("--this", help="a git revision to measure instead of the working tree")
    parser.add_argument("--no-background", action="store_true")
    parser.add_argument("--realistic", action="store_true", help="the realistic run instead of the torch model")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        trees = {"bare": ROOT, "baseline": unpack(args.baseline, work / "baseline"),
                 "this": unpack(args.this, work / "this") if args.this else ROOT}
        if args.realistic:
            realistic(trees, args.samples, args.rounds, work, not args.no_background)
            return
        for side, tree in trees.items():  # warm-up: byte code, schema cache, the benchmark's references
            measure(side, tree, args.samples, work, 10_000)
        loads = [os.getloadavg()[0]]
        rows: dict[str, list[dict]] = {side: [] for side in trees}
        with (Background(work) if not args.no_background else _Nothing()):
            for version in range(args.rounds):
                for side, tree in trees.items():
                    rows[side].append(measure(side, tree, args.samples, work, version))
                    loads.append(os.getloadavg()[0])
                    print(f"  round {version} {side}: {json.dumps(rows[side][-1])}", flush=True)
        bare = statistics.median(r["generate"] for r in rows["bare"])
        print(f"\n{args.samples} samples × 16 forward passes; load average {min(loads):.1f}–{max(loads):.1f} on "
              f"{os.cpu_count()} CPUs; {'beside' if not args.no_background else 'without'} a second evaluation; "
              f"median of {args.rounds}\n")
        print("| side | generate (model's own time) | / bare | whole call | overlapped (auto) |")
        print("| --- | --- | --- | --- | --- |")
        for side in trees:
            gen = statistics.median(r["generate"] for r in rows[side])
            call = statistics.median(r["call"] for r in rows[side])
            overlapped = "" if side == "bare" else "/".join(str(r.get("overlapped")) for r in rows[side])
            print(f"| {side} | {gen:.2f} s | {gen / bare:.2f}× | {call:.2f} s | {overlapped} |")


class _Nothing:
    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return None


if __name__ == "__main__":
    main()
