"""Generation and scoring side by side (``run.overlap``): a run takes about the longer phase, not their sum.

Run: ``python perf/overlap.py [--samples 32] [--metrics ssim,flicker,fvd] [--seconds-per-sample auto]
[--batch-size 8] [--rounds 2] [--work DIR]``

The model (:class:`SleepingModel`, ``model=python``) stands in for a world model on a GPU: its
``generate`` waits ``--seconds-per-sample`` per sample in ``time.sleep`` (which releases the GIL,
as a CUDA kernel does) and returns the initial frame with seeded noise. The metrics are
CPU-heavy: SSIM, flicker and FVD (I3D on the CPU) by default. ``auto`` first measures the score
phase with a model that does not wait and sets the wait so that both phases take about the same
time. Then, alternating ``--rounds`` times, each in its own process and its own empty store and
feature cache (so nothing is served from a cache):

* **sequential** (``run.overlap=false``): T_generate and T_score are its two phases, each alone;
* **overlapped** (``run.overlap=true``): T_run;
* **auto** (``run.overlap=auto``, the default): T_run_auto, and whether it chose to overlap;

with the start-up (planning before generation; aggregation and files after scoring) measured in
each run from its ``events.jsonl``. The target: T_run ≤ 1.15 × max(T_generate, T_score) +
start-up. Also: ``results.json`` of the two runs byte-identical (run id masked), peak RSS of each.
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
HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))
from _run_events import first_events  # noqa: E402 - perf/ is not a package


class SleepingModel:
    """Waits ``seconds_per_sample`` per sample without holding the GIL; initial frame + seeded noise."""

    name = "sleeping"

    def __init__(self, seconds_per_sample: float = 0.0):
        self.seconds_per_sample = float(seconds_per_sample)

    def generate(self, requests):
        import numpy as np

        from wfeval.models.base import actions_of, initial_frame

        time.sleep(self.seconds_per_sample * len(requests))
        out = []
        for request in requests:
            frame = initial_frame(request)
            n = len(actions_of(request)) + 1
            rng = np.random.default_rng(int(request.generation.get("seed") or 0))
            video = np.repeat(frame[None], n, axis=0).astype(np.int16) + rng.integers(-6, 7, (n, *frame.shape))
            out.append({"generated_video": np.clip(video, 0, 255).astype(np.uint8)})
        return out


def run(work: Path, name: str, args: argparse.Namespace, seconds_per_sample: float, overlap: bool | str) -> dict:
    """One run in its own process, store and feature cache; its phases from events.jsonl."""
    run_dir, cache = work / "runs" / name, work / "caches" / name
    cache.mkdir(parents=True)
    weights = Path(os.environ.get("WFEVAL_CACHE") or Path.home() / ".cache" / "wfeval") / "weights"
    if weights.is_dir():
        (cache / "weights").symlink_to(weights)  # the I3D weights, not the features
    env = {**os.environ, "WFEVAL_CACHE": str(cache), "WFEVAL_STORE": str(work / "stores" / name),
           "PYTHONPATH": os.pathsep.join([str(HERE), str(ROOT), os.environ.get("PYTHONPATH", "")])}
    argv = [sys.executable, "-m", "wfeval", "model=python", "model.object._target_=overlap.SleepingModel",
            f"+model.object.seconds_per_sample={seconds_per_sample}", f"benchmark.num_samples={args.samples}",
            f"metric=[{args.metrics}]", f"run.batch_size={args.batch_size}", f"run.overlap={str(overlap).lower()}",
            "run.report=false", "run.progress=off", f"hydra.run.dir={run_dir}"]
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, cwd=work, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(proc.pid, 0)
        if os.waitstatus_to_exitcode(status):
            err.seek(0)
            raise SystemExit(err.read().decode()[-3000:])
    wall = time.perf_counter() - started
    ev = first_events(run_dir)
    t = {k: v["t"] for k, v in ev.items()}
    generate = t["phase_finished:generate"] - t["phase_started:generate"]
    score = ev["phase_finished:score"]["seconds"]
    startup = (t["phase_started:generate"] - t["run_started"]) + (t["run_finished"] - t["phase_started:aggregate"])
    document = json.loads((run_dir / "results.json").read_text())
    document["run_id"] = "-"
    return {"run": round(t["run_finished"] - t["run_started"], 3), "generate": round(generate, 3),
            "score": round(score, 3), "score_busy": ev["phase_finished:score"].get("busy_seconds"),
            "auto_overlapped": ev["phase_finished:score"].get("overlapped"),
            "startup": round(startup, 3), "process_wall": round(wall, 2),
            "cpu": round(usage.ru_utime + usage.ru_stime, 2), "peak_rss_mb": round(usage.ru_maxrss / 1024, 1),
            "results": json.dumps(document, sort_keys=True)}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=32)
    parser.add_argument("--metrics", default="ssim,flicker,fvd")
    parser.add_argument("--seconds-per-sample", default="auto")
    parser.add_argument("--batch-size", type=int, default=8)
    parser.add_argument("--rounds", type=int, default=2)
    parser.add_argument("--work", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        work = (args.work or Path(tmp)).resolve()
        work.mkdir(parents=True, exist_ok=True)
        load = [round(os.getloadavg()[0], 1)]
        if args.seconds_per_sample == "auto":
            probe = run(work, "calibrate", args, 0.0, overlap=False)
            seconds_per_sample = round(probe["score"] / args.samples, 4)
        else:
            seconds_per_sample = float(args.seconds_per_sample)
        rows: dict[str, list[dict]] = {"sequential": [], "overlapped": [], "auto": []}
        for r in range(args.rounds):
            order = [("sequential", False), ("overlapped", True), ("auto", "auto")]
            for name, overlap in (order if r % 2 == 0 else order[::-1]):
                rows[name].append(run(work, f"{name}{r}", args, seconds_per_sample, overlap))
                load.append(round(os.getloadavg()[0], 1))
    seq, ovl = rows["sequential"], rows["overlapped"]
    med = statistics.median
    t_generate, t_score = med(r["generate"] for r in seq), med(r["score"] for r in seq)
    t_run, startup = med(r["run"] for r in ovl), med(r["startup"] for r in ovl)
    auto = rows["auto"]
    report = {
        "samples": args.samples, "metrics": args.metrics, "batch_size": args.batch_size,
        "seconds_per_sample": seconds_per_sample, "rounds": args.rounds, "load": load,
        "T_generate": t_generate, "T_score": t_score, "T_run_sequential": med(r["run"] for r in seq),
        "T_run": t_run, "startup": startup, "T_run_auto": med(r["run"] for r in auto),
        "auto_overlapped": [r["auto_overlapped"] for r in auto],
        "target": round(1.15 * max(t_generate, t_score) + startup, 3),
        "T_run_over_max": round((t_run - startup) / max(t_generate, t_score), 3),
        "met": t_run <= 1.15 * max(t_generate, t_score) + startup,
        "results_identical": len({r["results"] for r in seq + ovl + auto}) == 1,
        "runs": {k: [{kk: vv for kk, vv in r.items() if kk != "results"} for r in v] for k, v in rows.items()},
    }
    print(json.dumps(report, indent=1))


if __name__ == "__main__":
    main()
