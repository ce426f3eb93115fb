"""Pipeline overhead per sample, against a bare loop doing the same generation and scoring.

Run: ``python perf/pipeline_overhead.py [--samples 256] [--repeats 3]``

Both sides render the same gridworld episodes (reference + oracle generation) and compute the
same two metrics (generated_rate, artifact_count). The pipeline additionally stores artifacts
content-addressed, keeps the generation cache, writes the run directory and aggregates with
confidence intervals. Printed: median seconds per sample of each, and their ratio, measured
side by side in one process. "warm" re-runs the same config on the same store (every generation
is a cache hit), which is what a re-scoring or resumed run pays.
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

from wfeval.benchmarks.gridworld import world  # noqa: E402


def bare_loop(n: int, num_frames: int = 16) -> float:
    import hashlib

    started = time.perf_counter()
    rates, counts = [], []
    for index in range(n):
        seed = int.from_bytes(hashlib.sha256(f"1234/test/{index}".encode()).digest()[:4], "little")
        state = world.initial_state(seed, world.WorldSpec())
        actions = world.sample_actions(seed + 1, num_frames - 1)
        reference, _ = world.rollout(state, actions)  # the benchmark's reference video
        generated, _ = world.rollout(state, actions)  # the oracle's generation
        outputs = {"generated_video": generated}
        rates.append(1.0 if "generated_video" in outputs else 0.0)
        counts.append(float(len(outputs)))
    float(np.mean(rates)), float(np.mean(counts))
    return time.perf_counter() - started


def pipeline(n: int, store: Path, out: Path) -> float:
    from hydra import compose, initialize_config_module

    from wfeval.config import register_schemas
    from wfeval.pipeline.runner import run_from_config

    register_schemas()
    with initialize_config_module("wfeval.conf", version_base="1.3"):
        # the same two metrics the bare loop computes (the default suite has more)
        cfg = compose("config", overrides=[f"benchmark.num_samples={n}", f"run.store_dir={store}",
                                           "run.progress=off", "metric=[generated_rate,artifact_count]"])
    started = time.perf_counter()
    import contextlib
    import io

    with contextlib.redirect_stdout(io.StringIO()):
        run_from_config(cfg, output_dir=out)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=256)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    n = args.samples
    bare, cold, warm = [], [], []
    with tempfile.TemporaryDirectory() as tmp:
        for r in range(args.repeats):
            bare.append(bare_loop(n))
            store = Path(tmp) / f"store{r}"
            cold.append(pipeline(n, store, Path(tmp) / f"cold{r}"))
            warm.append(pipeline(n, store, Path(tmp) / f"warm{r}"))
    b, c, w = (statistics.median(x) / n * 1e3 for x in (bare, cold, warm))
    print(f"samples per run: {n}, repeats: {args.repeats} (median reported)")
    print(f"bare loop            {b:8.3f} ms/sample")
    print(f"pipeline, cold store {c:8.3f} ms/sample   ratio {c / b:5.2f}x   overhead {c - b:6.3f} ms/sample")
    print(f"pipeline, warm store {w:8.3f} ms/sample   ratio {w / b:5.2f}x   overhead {w - b:6.3f} ms/sample")


if __name__ == "__main__":
    main()
