"""Time per sample and peak memory of whole runs as the number of gridworld samples grows.

Run: ``python benchmarks/scale.py [--sizes 1000 10000] [--metrics generated_rate,artifact_count,flicker]
[--work DIR]``

Each size is one ``python -m wfeval model=oracle benchmark.num_samples=N`` in its own process on
an empty store (cold: render, store, generate, score, aggregate, write the run folder), then the
same command again (warm: generation cache and metric-result cache hits). Printed and written to
``<work>/scale.json``: seconds, seconds per sample, peak RSS (the kernel's accounting of that
child alone), the store's size on disk per sample. A flat-memory runner keeps peak RSS about
constant as N grows; the growth per 1k samples is printed so it can be compared.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from benchmarks.realistic_run import timed  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000])
    parser.add_argument("--metrics", default="generated_rate,artifact_count,flicker")
    parser.add_argument("--work", default=None)
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
        row = {"samples": n}
        for phase in ("cold", "warm"):
            run = work / f"run_{n}_{phase}"
            if run.exists():
                shutil.rmtree(run)
            seconds, rss, _ = timed([sys.executable, "-m", "wfeval", "model=oracle", f"benchmark.num_samples={n}",
                                     f"metric=[{args.metrics}]", f"hydra.run.dir={run}", "run.progress=off"],
                                    env={**env, "WFEVAL_STORE": str(store)})
            row[phase] = {"seconds": round(seconds, 2), "ms_per_sample": round(seconds / n * 1000, 2),
                          "peak_rss_mb": round(rss)}
            print(f"  N={n:6d} {phase}: {seconds:8.1f} s  {seconds / n * 1000:7.2f} ms/sample  peak RSS {rss:6.0f} MB",
                  flush=True)
        size = sum(p.stat().st_size for p in (store / "objects").rglob("*") if p.is_file())
        row["store_bytes_per_sample"] = round(size / n)
        rows.append(row)
    if len(rows) > 1:
        a, b = rows[0], rows[-1]
        growth = (b["cold"]["peak_rss_mb"] - a["cold"]["peak_rss_mb"]) / ((b["samples"] - a["samples"]) / 1000)
        print(f"  peak RSS growth (cold): {growth:.1f} MB per 1k samples", flush=True)
    (work / "scale.json").write_text(json.dumps({"metrics": args.metrics, "rows": rows,
                                                 "load_after": os.getloadavg()}, indent=2))
    print(f"report: {work / 'scale.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
