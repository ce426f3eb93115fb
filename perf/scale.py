"""Time per sample and peak memory of whole runs as the number of gridworld samples grows.

Run: ``python perf/scale.py [--sizes 1000 10000 100000] [--metrics generated_rate,artifact_count,flicker]
[--work DIR] [--report]``

Each size is one ``python -m wfeval model=oracle benchmark.num_samples=N`` in its own process on
an empty store (cold: render, store, generate, score, aggregate, write the run folder), then the
same command again (warm: generation cache and metric-result cache hits). Printed and written to
``<work>/scale.json``: wall seconds, CPU seconds (user + system, of that child alone), both per
sample, peak RSS (the kernel's accounting of that child alone), the seconds of each phase (from
the run's ``events.jsonl``: plan = preparing and spooling the samples, generate, score,
aggregate), the store's size on disk per sample, and the load average around each run (the
machine may be shared: compare CPU seconds, not wall seconds). A flat-memory runner keeps peak
RSS about constant as N grows: the growth per 1k samples between each pair of sizes is printed.

``report.html`` is not written unless ``--report`` is given (it is then part of each run's
process); ``perf/report_scale.py`` measures the report alone, on kept run folders.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def run(argv: list[str], env: dict) -> dict:
    """Wall and CPU seconds, peak RSS (MB) of one child process (os.wait4: its own rusage)."""
    load = os.getloadavg()[0]
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(argv[:6])} ... failed:\n{err.read().decode()[-3000:]}")
    return {"seconds": seconds, "cpu_seconds": usage.ru_utime + usage.ru_stime, "peak_rss_mb": usage.ru_maxrss / 1024,
            "load": [round(load, 1), round(os.getloadavg()[0], 1)]}


def phases(run_dir: Path) -> dict[str, float]:
    """Seconds of each phase of a run, from its events (plan: from the start to generation)."""
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    start = {e["phase"]: e["t"] for e in events if e["event"] == "phase_started"}
    end = {e["phase"]: e["t"] for e in events if e["event"] == "phase_finished"}
    out = {"plan": round(start["generate"] - events[0]["t"], 2)}
    out.update({p: round(end[p] - start[p], 2) for p in ("generate", "score", "aggregate")})
    return out


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--metrics", default="generated_rate,artifact_count,flicker")
    parser.add_argument("--work", default=None)
    parser.add_argument("--report", action="store_true", help="also write report.html (run.report=true)")
    parser.add_argument("--keep", action="store_true", help="keep each size's store and run folders")
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="wfeval_scale_")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), os.environ.get("PYTHONPATH", "")]).rstrip(os.pathsep)}
    print(f"work folder {work}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; "
          f"metrics [{args.metrics}]", flush=True)
    rows = []
    for n in args.sizes:
        store = work / f"store_{n}"
        if store.exists():
            shutil.rmtree(store)
        row: dict = {"samples": n}
        for phase in ("cold", "warm"):
            run_dir = work / f"run_{n}_{phase}"
            if run_dir.exists():
                shutil.rmtree(run_dir)
            row[phase] = m = run([sys.executable, "-m", "wfeval", "model=oracle", f"benchmark.num_samples={n}",
                                  f"metric=[{args.metrics}]", f"hydra.run.dir={run_dir}", "run.progress=off",
                                  f"run.report={str(args.report).lower()}"], env={**env, "WFEVAL_STORE": str(store)})
            m.update(ms_per_sample=m["seconds"] / n * 1000, cpu_ms_per_sample=m["cpu_seconds"] / n * 1000,
                     phases=phases(run_dir))
            print(f"  N={n:6d} {phase}: {m['seconds']:8.1f} s  {m['ms_per_sample']:6.2f} ms/sample  "
                  f"CPU {m['cpu_ms_per_sample']:6.2f} ms/sample  peak RSS {m['peak_rss_mb']:6.1f} MB  "
                  f"phases {m['phases']}  load {m['load'][0]}→{m['load'][1]}", flush=True)
        size = sum(p.stat().st_size for p in store.rglob("*") if p.is_file())
        row["store_bytes_per_sample"] = round(size / n)
        rows.append(row)
        if not args.keep:
            for path in (store, work / f"run_{n}_cold", work / f"run_{n}_warm"):
                shutil.rmtree(path, ignore_errors=True)
    for a, b in zip(rows, rows[1:]):
        per_1k = (b["samples"] - a["samples"]) / 1000
        growth = {p: (b[p]["peak_rss_mb"] - a[p]["peak_rss_mb"]) / per_1k for p in ("cold", "warm")}
        print(f"  peak RSS growth {a['samples']} → {b['samples']}: cold {growth['cold']:+.3f} MB per 1k samples "
              f"({b['cold']['peak_rss_mb'] - a['cold']['peak_rss_mb']:+.1f} MB), warm {growth['warm']:+.3f} MB "
              f"per 1k ({b['warm']['peak_rss_mb'] - a['warm']['peak_rss_mb']:+.1f} MB)", flush=True)
    (work / "scale.json").write_text(json.dumps({"metrics": args.metrics, "report": args.report, "rows": rows,
                                                 "load_after": os.getloadavg()}, indent=2))
    print(f"report: {work / 'scale.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
