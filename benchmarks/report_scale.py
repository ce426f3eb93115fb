"""Peak memory and time of the HTML report (``python -m wfeval.report``) as gridworld runs grow.

Run: ``python benchmarks/report_scale.py [--sizes 1000 10000 100000] [--metrics generated_rate,artifact_count,flicker]
[--work DIR] [--baseline CHECKOUT] [--repeat 1]``

Each size's run folder is made once and kept (``<work>/run_N``, reused when it exists): ``python -m
wfeval model=oracle benchmark.num_samples=N metric=[...] run.report=false``. Then ``python -m
wfeval.report <work>/run_N`` runs in its own process, measured: wall and CPU seconds (user +
system, of that child alone) and peak RSS (the kernel's accounting of that child alone), with the
load average around it. ``--baseline`` names another checkout of wfeval (e.g. main before the
report streamed: ``git archive <commit> | tar -x -C DIR``): its report of the same folder is
measured too, alternating with this one, and the two pages are compared byte for byte (the
"written" time masked). Printed, and written to ``<work>/report_scale.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child(argv: list[str], code: Path, cwd: Path, env: dict | None = None) -> dict:
    """Wall and CPU seconds, peak RSS (MB) of one child process running ``code``'s wfeval."""
    env = {**os.environ, **(env or {}), "PYTHONPATH": str(code)}
    load = os.getloadavg()[0]
    started = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=err, env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        seconds = time.perf_counter() - started
        if os.waitstatus_to_exitcode(status) != 0:
            err.seek(0)
            raise SystemExit(f"{' '.join(argv[:6])} ... failed:\n{err.read().decode()[-3000:]}")
    return {"seconds": round(seconds, 2), "cpu_seconds": round(usage.ru_utime + usage.ru_stime, 2),
            "peak_rss_mb": round(usage.ru_maxrss / 1024, 1), "load": [round(load, 1), round(os.getloadavg()[0], 1)]}


def page(path: Path) -> str:
    return re.sub(r"written [0-9-]+ [0-9:]+ UTC", "written", path.read_text(encoding="utf-8"))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--metrics", default="generated_rate,artifact_count,flicker")
    parser.add_argument("--work", default=None)
    parser.add_argument("--baseline", type=Path, default=None, help="another wfeval checkout to measure side by side")
    parser.add_argument("--repeat", type=int, default=1)
    args = parser.parse_args()
    work = Path(args.work or tempfile.mkdtemp(prefix="wfeval_report_scale_")).resolve()
    work.mkdir(parents=True, exist_ok=True)
    sides = {"this": ROOT} | ({"baseline": args.baseline.resolve()} if args.baseline else {})
    print(f"work folder {work}; load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} CPUs; "
          f"metrics [{args.metrics}]; sides {', '.join(f'{k}={v}' for k, v in sides.items())}", flush=True)
    rows = []
    for n in args.sizes:
        run_dir = work / f"run_{n}"
        if not (run_dir / "results.json").is_file():
            made = child([sys.executable, "-m", "wfeval", "model=oracle", f"benchmark.num_samples={n}",
                          f"metric=[{args.metrics}]", f"hydra.run.dir={run_dir}", "run.progress=off", "run.report=false"],
                         ROOT, work, env={"WFEVAL_STORE": str(work / f"store_{n}")})
            print(f"  N={n:6d} run made in {made['seconds']:.1f} s", flush=True)
        files = {f: (run_dir / f).stat().st_size for f in ("samples.jsonl", "metrics.jsonl", "generations.jsonl",
                                                          "steps.jsonl") if (run_dir / f).is_file()}
        row: dict = {"samples": n, "file_mb": round(sum(files.values()) / 1e6, 1)}
        for repeat in range(args.repeat):
            for side, code in (sides.items() if repeat % 2 == 0 else reversed(sides.items())):
                out = work / f"report_{n}_{side}.html"
                m = child([sys.executable, "-m", "wfeval.report", str(run_dir), "--out", str(out)], code, work)
                row.setdefault(side, []).append(m)
                print(f"  N={n:6d} {side:8s}: report {m['seconds']:7.2f} s  CPU {m['cpu_seconds']:7.2f} s  "
                      f"peak RSS {m['peak_rss_mb']:7.1f} MB  load {m['load'][0]}→{m['load'][1]}", flush=True)
        if "baseline" in sides:
            row["identical_page"] = page(work / f"report_{n}_this.html") == page(work / f"report_{n}_baseline.html")
            print(f"  N={n:6d} pages identical: {row['identical_page']}", flush=True)
        rows.append(row)
    for side in sides:
        for a, b in zip(rows, rows[1:]):
            growth = min(m["peak_rss_mb"] for m in b[side]) - min(m["peak_rss_mb"] for m in a[side])
            print(f"  {side}: report peak RSS {a['samples']} → {b['samples']}: {growth:+.1f} MB "
                  f"({growth / ((b['samples'] - a['samples']) / 1000):+.3f} MB per 1k samples)", flush=True)
    (work / "report_scale.json").write_text(json.dumps({"metrics": args.metrics, "rows": rows,
                                                        "load_after": os.getloadavg()}, indent=2))
    print(f"report: {work / 'report_scale.json'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
