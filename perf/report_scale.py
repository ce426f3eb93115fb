"""Peak memory and time of the HTML report (``python -m wfeval.report``), ``python -m
wfeval.replay`` or ``python -m wfeval.merge`` as gridworld runs grow.

Run: ``python perf/report_scale.py [--sizes 1000 10000 100000] [--metrics generated_rate,artifact_count,flicker]
[--work DIR] [--baseline CHECKOUT] [--repeat 1] [--command report|replay|merge]``

Each size's run folder is made once and kept (``<work>/run_N``, reused when it exists): ``python -m
wfeval model=oracle benchmark.num_samples=N metric=[...] run.report=false``. Then ``python -m
wfeval.report <work>/run_N`` runs in its own process, measured: wall and CPU seconds (user +
system, of that child alone) and peak RSS (the kernel's accounting of that child alone), with the
load average around it. ``--baseline`` names another checkout of wfeval (e.g. main before the
report streamed: ``git archive <commit> | tar -x -C DIR``): its report of the same folder is
measured too, alternating with this one, and the two pages are compared byte for byte (the
"written" time masked). ``--command replay`` measures ``python -m wfeval.replay <work>/run_N``
instead, and checks that each side's rebuilt ``results.json`` equals the run's byte for byte.
``--command merge`` cuts each run folder into two shard runs (``<work>/shards_N``: its files split
by sample, as ``run.shard=0/2`` and ``1/2`` would have written them, the manifests marked so) and
measures ``python -m wfeval.merge`` of them; the merged ``results.json`` must equal the run's but
for its ``run_id``, and the merged files must be the shards' files one after the other.
Printed, and written to ``<work>/<command>_scale.json``.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
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


_FILES = {"generations.jsonl": lambda row: row["request"]["sample_id"], "metrics.jsonl": lambda row: row["sample_id"],
          "samples.jsonl": lambda row: row["sample_id"], "steps.jsonl": lambda row: row["sample_id"]}


def split_in_shards(run_dir: Path, folder: Path) -> list[Path]:
    """The run's files cut into two shard runs (first half of its samples, second half); made once."""
    shards = [folder / "0_shard", folder / "1_shard"]
    if all((d / "results.json").is_file() for d in shards):
        return shards
    ids = [json.loads(line)["request"]["sample_id"] for line in (run_dir / "generations.jsonl").open()]
    half = {sample_id: i >= len(ids) // 2 for i, sample_id in enumerate(ids)}
    manifest = json.loads((run_dir / "manifest.json").read_text())
    for k, shard in enumerate(shards):
        shutil.copytree(run_dir / ".hydra", shard / ".hydra", dirs_exist_ok=True)
        for name, sample_of in _FILES.items():
            with (run_dir / name).open() as rows, (shard / name).open("w") as out:
                out.writelines(line for line in rows if half[sample_of(json.loads(line))] == k)
        n = len(ids) // 2 if k == 0 else len(ids) - len(ids) // 2
        (shard / "manifest.json").write_text(json.dumps({**manifest, "shard": f"{k}/2", "status": "completed",
                                                         "benchmark": {**manifest["benchmark"], "n_samples": n}}))
        shutil.copy(run_dir / "results.json", shard / "results.json")  # what merge looks for; not read
    return shards


def same_merge(run_dir: Path, shards: list[Path], merged: Path) -> bool:
    """The merged run's results equal the run's (but for the run_id), its files the shards' one after the other."""
    def masked(path: Path) -> str:
        return re.sub(r'"run_id": "[^"]*"', "", path.read_text(encoding="utf-8"))
    return masked(merged / "results.json") == masked(run_dir / "results.json") and all(
        (merged / name).read_bytes() == b"".join((d / name).read_bytes() for d in shards) for name in _FILES)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10000, 100000])
    parser.add_argument("--metrics", default="generated_rate,artifact_count,flicker")
    parser.add_argument("--work", default=None)
    parser.add_argument("--baseline", type=Path, default=None, help="another wfeval checkout to measure side by side")
    parser.add_argument("--repeat", type=int, default=1)
    parser.add_argument("--command", choices=("report", "replay", "merge"), default="report")
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
                if args.command == "merge":
                    out, shards = work / f"merged_{n}_{side}", split_in_shards(run_dir, work / f"shards_{n}")
                    shutil.rmtree(out, ignore_errors=True)
                    m = child([sys.executable, "-m", "wfeval.merge", *map(str, shards), "--out", str(out)], code, work)
                    m["identical_results"] = same_merge(run_dir, shards, out)
                elif args.command == "replay":
                    out = work / f"replay_{n}_{side}"
                    m = child([sys.executable, "-m", "wfeval.replay", str(run_dir), "--out", str(out)], code, work)
                    m["identical_results"] = (out / "results.json").read_bytes() == (run_dir / "results.json").read_bytes()
                else:
                    out = work / f"report_{n}_{side}.html"
                    m = child([sys.executable, "-m", "wfeval.report", str(run_dir), "--out", str(out)], code, work)
                row.setdefault(side, []).append(m)
                print(f"  N={n:6d} {side:8s}: {args.command} {m['seconds']:7.2f} s  CPU {m['cpu_seconds']:7.2f} s  "
                      f"peak RSS {m['peak_rss_mb']:7.1f} MB  load {m['load'][0]}→{m['load'][1]}"
                      + (f"  results identical: {m['identical_results']}" if args.command != "report" else ""),
                      flush=True)
        if "baseline" in sides and args.command == "report":
            row["identical_page"] = page(work / f"report_{n}_this.html") == page(work / f"report_{n}_baseline.html")
            print(f"  N={n:6d} pages identical: {row['identical_page']}", flush=True)
        rows.append(row)
    for side in sides:
        for a, b in zip(rows, rows[1:]):
            growth = min(m["peak_rss_mb"] for m in b[side]) - min(m["peak_rss_mb"] for m in a[side])
            print(f"  {side}: {args.command} peak RSS {a['samples']} → {b['samples']}: {growth:+.1f} MB "
                  f"({growth / ((b['samples'] - a['samples']) / 1000):+.3f} MB per 1k samples)", flush=True)
    written = work / f"{args.command}_scale.json"
    written.write_text(json.dumps({"command": args.command, "metrics": args.metrics, "rows": rows,
                                   "load_after": os.getloadavg()}, indent=2))
    print(f"written: {written}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
