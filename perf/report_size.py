"""The HTML report's cost: its share of a default run, and its size and load time for 1,000 samples.

Run: ``python perf/report_size.py [--samples 1000] [--repeats 3] [--browser chromium]``

1. Default run (``python -m wfeval``, 32 gridworld samples, the suite's 7 metrics) with
   ``run.report=true`` and ``run.report=false``, alternated, each as a fresh process on a warm
   store: median wall and CPU seconds of each, and the difference.
2. A ``--samples``-sample run (``model=static``, by default the cheap metrics psnr, mse,
   flicker, generated_rate; ``--metrics suite`` for the gridworld suite's 7; its own report
   off), then ``python -m wfeval.report`` on it: seconds to
   write, file size, and the time headless Chromium takes to load and render it (the page's own
   clock from navigation start to the end of its load event, read back through ``--dump-dom``;
   and the wall time of the whole headless run, browser start included; medians of ``--repeats``).
"""

from __future__ import annotations

import argparse
import os
import re
import resource
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _run(args: list[str], cwd: Path) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child) of one command."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, capture_output=True, text=True,
                          env={**os.environ, "OMP_NUM_THREADS": "1", "PYTHONPATH": str(ROOT)})
    wall = time.perf_counter() - started
    if proc.returncode != 0:
        sys.exit(f"{' '.join(args)} failed:\n{proc.stderr[-2000:]}")
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def default_run_overhead(work: Path, repeats: int) -> None:
    base = [sys.executable, "-m", "wfeval", f"run.store_dir={work / 'store'}", "run.progress=off"]
    _run(base + ["run.report=false"], work)  # warm the store and the file cache
    times: dict[bool, list[tuple[float, float]]] = {True: [], False: []}
    for _ in range(repeats):
        for report in (False, True):
            times[report].append(_run(base + [f"run.report={str(report).lower()}"], work))
    print("default run (python -m wfeval: 32 samples, 7 metrics), fresh process each, median of", repeats)
    for report in (False, True):
        wall = statistics.median(t[0] for t in times[report])
        cpu = statistics.median(t[1] for t in times[report])
        print(f"  run.report={str(report).lower():5}  wall {wall:6.2f} s   cpu {cpu:6.2f} s")
    dw = statistics.median(t[0] for t in times[True]) - statistics.median(t[0] for t in times[False])
    dc = statistics.median(t[1] for t in times[True]) - statistics.median(t[1] for t in times[False])
    print(f"  report adds     wall {dw:+6.2f} s   cpu {dc:+6.2f} s")


# injected into a copy of the page: the browser's own clock from navigation start to the end of
# the load event (every data URI decoded, the script run), written where --dump-dom shows it
TIMER = ("<script>addEventListener('load', function () { setTimeout(function () {"
         " var n = performance.getEntriesByType('navigation')[0];"
         " document.documentElement.setAttribute('data-load-ms', String(n.loadEventEnd)); }, 0); });</script>")


def _browse(browser: str, page: Path, profile: Path) -> tuple[float, float]:
    """(seconds from navigation start to the end of the load event, wall seconds of the whole --dump-dom)."""
    started = time.perf_counter()
    proc = subprocess.run([browser, "--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
                           f"--user-data-dir={profile}", "--virtual-time-budget=10000", "--dump-dom", page.as_uri()],
                          capture_output=True, text=True, timeout=300)
    wall = time.perf_counter() - started
    found = re.search(r'data-load-ms="([0-9.]+)"', proc.stdout)
    if proc.returncode != 0 or found is None:
        sys.exit(f"{browser} could not render {page}:\n{proc.stderr[-2000:]}")
    return float(found.group(1)) / 1000, wall


def large_run_report(work: Path, samples: int, repeats: int, browser: str | None, metrics: str) -> None:
    run_dir = work / "large"
    selection = [] if metrics == "suite" else [f"metric=[{metrics}]"]
    _run([sys.executable, "-m", "wfeval", f"benchmark.num_samples={samples}", "model=static", *selection,
          f"run.store_dir={work / 'store'}", "run.progress=off", "run.report=false", f"hydra.run.dir={run_dir}"], work)
    page = work / "large.html"
    wall, cpu = _run([sys.executable, "-m", "wfeval.report", str(run_dir), "--out", str(page)], work)
    size = page.stat().st_size
    print(f"\n{samples}-sample run (model=static, metrics: {metrics}): python -m wfeval.report")
    print(f"  written in      wall {wall:6.2f} s   cpu {cpu:6.2f} s (fresh process, imports included)")
    print(f"  file size       {size / 1e6:6.2f} MB ({size:,} bytes)")
    if browser is None:
        print("  browser load    not measured (no chromium found)")
        return
    timed = work / "timed.html"
    timed.write_text(page.read_text(encoding="utf-8").replace("<head>", "<head>" + TIMER, 1), encoding="utf-8")
    _browse(browser, timed, work / "profile")  # the first start of a profile is slower
    runs = [_browse(browser, timed, work / "profile") for _ in range(repeats)]
    load = statistics.median(r[0] for r in runs)
    wall = statistics.median(r[1] for r in runs)
    print(f"  chromium: load and render {load:.2f} s (navigation start to the end of the load event); "
          f"whole headless --dump-dom from a cold start {wall:.2f} s (median of {repeats})")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=1000)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--browser", default=shutil.which("chromium") or shutil.which("chromium-browser"))
    parser.add_argument("--metrics", default="generated_rate,psnr,mse,flicker",
                        help="metric ids of the large run, or 'suite' for the benchmark's 7")
    parser.add_argument("--skip-default", action="store_true", help="only the large-run measurement")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="wfeval-report-size-") as tmp:
        work = Path(tmp)
        if not args.skip_default:
            default_run_overhead(work, args.repeats)
        large_run_report(work, args.samples, args.repeats, args.browser, args.metrics)


if __name__ == "__main__":
    main()
