"""Per-step overhead of the autoregressive step driver against calling the model's step in a bare loop.

Run: ``python perf/step_overhead.py [--samples 32] [--repeats 5] [--models static,oracle]``

Both sides step the same gridworld requests one action per call (``protocol.chunk=1``) with the
same model object. The bare loop is ``state = model.start(r)`` then ``model.step(state, [a])``
per action, concatenating the frames. The driver (wfeval.protocols.drivers.AutoregressiveDriver)
adds what a run records: the output check of every step, one timed row per call (steps.jsonl)
and the Generated outcome. Printed per model: median microseconds per step of each side over
the repeats (interleaved in one process) and their ratio. ``static`` steps in microseconds, so
it shows the driver's fixed cost; ``oracle`` simulates and renders, as a real model's step would
dominate.
"""

from __future__ import annotations

import argparse
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


def requests(n: int, store_dir: Path) -> list:
    from hydra import compose, initialize_config_module

    from wfeval.storage.artifacts import ArtifactStore
    from wfeval.config import register_schemas
    from wfeval.pipeline import build

    register_schemas()
    with initialize_config_module("wfeval.conf", version_base="1.3"):
        cfg = compose("config", overrides=[f"benchmark.num_samples={n}"])
    return build.select_requests(build.build_benchmark(cfg), store=ArtifactStore(store_dir), task=build.build_task(cfg),
                                 protocol=build.build_protocol(cfg), limit=None, shard=None)


def bare(model, reqs) -> tuple[float, int]:
    from wfeval.models.base import initial_frame

    steps = 0
    started = time.perf_counter()
    for request in reqs:
        state = model.start(request)
        frames = [initial_frame(request)[None]]
        for action in request.controls["actions"]:
            out = model.step(state, [action])
            state = out.state
            frames.append(out.frames)
            steps += 1
        np.concatenate(frames)
    return time.perf_counter() - started, steps


def driven(driver, reqs) -> tuple[float, int]:
    started = time.perf_counter()
    outcomes = driver.generate(reqs)
    seconds = time.perf_counter() - started
    steps = sum(1 for o in outcomes for row in o.metadata["steps"] if row["call"] == "step")
    return seconds, steps


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--models", default="static,oracle")
    args = parser.parse_args()

    from wfeval.benchmarks.gridworld import baselines
    from wfeval.protocols.autoregressive import AutoregressiveDriver

    classes = {"static": baselines.StaticModel, "oracle": baselines.OracleModel, "lagged": baselines.LaggedModel,
               "noisy": baselines.NoisyModel}
    with tempfile.TemporaryDirectory() as tmp:
        reqs = requests(args.samples, Path(tmp))
        print(f"{args.samples} samples × {len(reqs[0].controls['actions'])} steps, chunk=1, {args.repeats} repeats "
              "(interleaved), median µs per step")
        print(f"{'model':8s} {'bare loop':>10s} {'driver':>10s} {'overhead':>10s} {'ratio':>7s}")
        for name in args.models.split(","):
            model = classes[name]()
            driver = AutoregressiveDriver(model, chunk=1)
            bare(model, reqs[:2]), driven(driver, reqs[:2])  # warm caches (render layers, imports)
            b, d = [], []
            for _ in range(args.repeats):
                seconds, steps = bare(model, reqs)
                b.append(seconds / steps * 1e6)
                seconds, steps = driven(driver, reqs)
                d.append(seconds / steps * 1e6)
            mb, md = statistics.median(b), statistics.median(d)
            print(f"{name:8s} {mb:10.1f} {md:10.1f} {md - mb:10.1f} {md / mb:7.2f}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
