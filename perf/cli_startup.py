"""Start-up time of ``python -m wfeval --help`` and ``--cfg job``, this checkout against a baseline.

Run: ``python perf/cli_startup.py [--repeats 10] [--baseline REV] [--command="model=static --cfg job"]``
or ``python perf/cli_startup.py --first-sample [gridworld atari_pong ...] [--repeats 5]``

The baseline is a commit of this repository (default: the last one before the start-up work of
issue 16), unpacked with ``git archive`` into a temporary folder and run with the same
interpreter, so both sides share the installed Hydra, numpy and torch. The two sides alternate
run by run (a shared machine's load falls on both), with a third side: this checkout with an empty
schema cache (``WFEVAL_CACHE``; the first run after any change to wfeval's sources). Printed per
command: median wall and median CPU (user + system) seconds of each side, the ratio this/baseline,
and whether all sides printed byte-identical output with the same exit status; then the floors no
wfeval change can go below: the interpreter starting, and importing Hydra and OmegaConf. The load
average is printed before and after.

``--first-sample [BENCHMARK ...]`` (issue 37 item 1) measures instead, per built-in benchmark, the
time from starting ``python -m wfeval benchmark=<b> model=static`` to its first generated sample:
the ``time`` of the first ``generate`` row of the run folder's ``steps.jsonl`` (written and flushed
as each generated sample is recorded) less the wall clock just before the process was started; the
process is then killed (what follows the first sample is not measured). Warm: each side first runs
each command once, untimed, to the end (byte code written, its schema cache filled; the game recordings
made and kept in the store both sides share, ``--store``); before each timed run the store's
``generations/`` is removed, so the model generates again. The dataset benchmarks read copies of the repository's
``examples/datasets`` written into the temporary folder. Printed per benchmark: the median time to
the first sample of each side, the ratio, the CPU seconds (user + system, all threads) each process had
used when its first sample was seen (on a loaded machine the figure closer to a quiet machine's wall
time than the wall time is), and where this checkout's time went (process start to the
run's ``run_started`` event: imports and composition; then the plan, the model's setup and its first
batch), as a markdown table for docs/performance.md.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import resource
import shlex
import shutil
import signal
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from datetime import datetime
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: main just before issue 16 item 6 (lazy schema nodes): --help 0.6-0.7 s here
DEFAULT_BASELINE = "3212a89"
_EMPTY = itertools.count()
#: main before issue 37 item 1's time to the first sample
FIRST_SAMPLE_BASELINE = "c1c936d"
#: each built-in benchmark's command (model=static: generation costs nothing, start-up is what is left)
FIRST_SAMPLE = {
    "gridworld": ["benchmark=gridworld"],
    "atari_pong": ["benchmark=atari_pong"],
    "crafter": ["benchmark=crafter"],
    "memory_maze": ["benchmark=memory_maze"],
    "folder": ["benchmark=folder", "benchmark.dataset_root={data}/square_folder"],
    "lerobot": ["benchmark=lerobot", "benchmark.dataset_root={data}/square_lerobot"],
    "hdf5": ["benchmark=hdf5", "benchmark.dataset_root={data}/square.hdf5", "benchmark.fps=10"],
    "video_actions": ["benchmark=video_actions", "benchmark.dataset_root={data}/square_episodes"],
}
COMMANDS = ["--help", "--cfg job", "model=static metric=[psnr,fvd] --cfg job", "task=goal_reaching --cfg job"]


def unpack(rev: str, into: Path) -> Path:
    """The tree of ``rev`` under ``into``, importable as ``wfeval`` (``wfeval.conf`` linked to ``conf/``)."""
    archive = subprocess.run(["git", "-C", str(ROOT), "archive", "--format=tar", rev], check=True,
                             capture_output=True).stdout
    into.mkdir()
    with tarfile.open(fileobj=BytesIO(archive)) as tar:
        try:
            tar.extractall(into, filter="data")
        except TypeError:  # Python without extraction filters (the archive is this repository's own)
            tar.extractall(into)
    (into / "wfeval" / "conf").symlink_to(into / "conf", target_is_directory=True)
    return into


def check_this_checkout() -> None:
    """This interpreter must import wfeval (and wfeval.conf) from this checkout, as the current side runs it."""
    probe = "import wfeval, wfeval.conf; print(wfeval.__file__); print(wfeval.conf.__file__)"
    out = subprocess.run([sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=True)
    paths = [Path(line).resolve() for line in out.stdout.split()]
    if not all(ROOT in p.parents for p in paths):
        sys.exit(f"this interpreter imports wfeval from {paths}, not from {ROOT}: use the checkout's venv")


def timed(args: list[str], cwd: Path, env: dict | None = None) -> tuple[float, float, bytes, int]:
    """Wall seconds, CPU seconds (user + system, the child and its children), stdout+stderr, exit status."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    started = time.perf_counter()
    proc = subprocess.run(args, cwd=cwd, capture_output=True, env={**os.environ, **(env or {})})
    wall = time.perf_counter() - started
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu, proc.stdout + b"\0" + proc.stderr, proc.returncode


def compare(command: str, trees: dict[str, Path], repeats: int, cache: Path) -> None:
    """Alternating runs of the baseline, this checkout (schema cache filled) and this checkout with
    an empty schema cache (the first run after any change to wfeval's sources)."""
    args = [sys.executable, "-m", "wfeval", *shlex.split(command)]
    sides = {"baseline": (trees["baseline"], None), "this": (trees["this"], cache), "this, empty cache": None}
    walls: dict[str, list[float]] = {side: [] for side in sides}
    cpus: dict[str, list[float]] = {side: [] for side in sides}
    outputs: dict[str, set[tuple[bytes, int]]] = {side: set() for side in sides}
    timed(args, trees["baseline"])  # write __pycache__, fill the schema cache, warm the page cache: not timed
    timed(args, trees["this"], {"WFEVAL_CACHE": str(cache)})
    for run in range(repeats):
        for side in sides:
            tree = trees["baseline" if side == "baseline" else "this"]
            env = {"WFEVAL_CACHE": str(cache if side == "this" else cache.with_name(f"empty-{next(_EMPTY)}"))}
            wall, cpu, output, status = timed(args, tree, env)
            walls[side].append(wall)
            cpus[side].append(cpu)
            outputs[side].add((output.replace(bytes(tree), b"<tree>"), status))
    base, this, empty = (statistics.median(walls[s]) for s in sides)
    base_cpu, this_cpu, empty_cpu = (statistics.median(cpus[s]) for s in sides)
    same = "identical" if len(set().union(*outputs.values())) == 1 else "DIFFERENT"
    print(f"{command:44s} {base:6.3f} {this:6.3f} {this / base:6.2f}x {empty:6.3f}   cpu {base_cpu:6.3f} "
          f"{this_cpu:6.3f} {empty_cpu:6.3f}   output {same}")


def floor(label: str, code: str, repeats: int) -> None:
    runs = [timed([sys.executable, "-c", code], ROOT)[:2] for _ in range(repeats)]
    print(f"{label:44s}        {statistics.median(r[0] for r in runs):6.3f}"
          f"            cpu        {statistics.median(r[1] for r in runs):6.3f}")


def _env(side_dir: Path, store: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}  # warm: byte code kept
    return {**env, "WFEVAL_STORE": str(store), "WFEVAL_CACHE": str(side_dir / "cache")}


def first_generated(run_dir: Path) -> dict | None:
    """The first generated sample's row of ``steps.jsonl``, once it is there."""
    try:
        text = (run_dir / "steps.jsonl").read_text()
    except OSError:
        return None
    for line in text.splitlines():
        try:
            row = json.loads(line)
        except ValueError:
            return None  # a line being written
        if row.get("phase") == "generate":
            return row
    return None


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of a running process (all its threads), from ``/proc/<pid>/stat``."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def to_first_sample(args: list[str], tree: Path, side_dir: Path, store: Path, run_dir: Path,
                    limit: float = 300.0) -> tuple[float, float, float]:
    """(seconds to the first generated sample, seconds to the run_started event, CPU seconds of the
    process when the first sample was seen)."""
    shutil.rmtree(store / "generations", ignore_errors=True)
    started = time.time()
    proc = subprocess.Popen(args + [f"hydra.run.dir={run_dir}"], cwd=tree, env=_env(side_dir, store),
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    try:
        while (row := first_generated(run_dir)) is None:
            if proc.poll() is not None:
                sys.exit(f"{' '.join(args)} ended (status {proc.returncode}) before a sample: "
                         f"{proc.stderr.read().decode()[-2000:]}")
            if time.time() - started > limit:
                sys.exit(f"{' '.join(args)}: no sample after {limit:.0f} s")
            time.sleep(0.005)
        cpu = cpu_seconds(proc.pid)
    finally:
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()
        proc.stderr.close()
    if row.get("cached") or row.get("status") != "ok":
        sys.exit(f"{' '.join(args)}: the first sample was {row} (cached or not generated)")
    first = datetime.fromisoformat(row["time"]).timestamp() - started
    events = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines() if line.strip()]
    run_started = next(e["t"] for e in events if e["event"] == "run_started") - started
    return first, run_started, cpu


def first_sample(benchmarks: list[str], trees: dict[str, Path], repeats: int, tmp: Path, store: Path) -> None:
    """Per benchmark: the sides alternate run by run, each after one untimed run to the end. Both sides
    use one store (the same layout at both commits): the game recordings are made once."""
    data = tmp / "datasets"
    shutil.copytree(ROOT / "examples" / "datasets", data)
    print("| benchmark | before, wall | now, wall | ratio | before, CPU | now, CPU | now: start → run_started "
          "| now: → first sample |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for name in benchmarks:
        args = [sys.executable, "-m", "wfeval", *(a.format(data=data) for a in FIRST_SAMPLE[name]), "model=static"]
        for side, tree in trees.items():  # warm-up: the whole run, untimed
            proc = subprocess.run(args + [f"hydra.run.dir={tmp / 'runs' / f'{side}-{name}-warm'}", "run.report=false"],
                                  cwd=tree, env=_env(tmp / side, store), capture_output=True, text=True)
            if proc.returncode:
                sys.exit(f"{side}: {' '.join(args)} failed ({proc.returncode}): {proc.stderr[-2000:]}")
        firsts: dict[str, list[float]] = {side: [] for side in trees}
        cpus: dict[str, list[float]] = {side: [] for side in trees}
        starts: list[float] = []
        for run in range(repeats):
            for side, tree in trees.items():
                first, run_started, cpu = to_first_sample(args, tree, tmp / side, store,
                                                          tmp / "runs" / f"{side}-{name}-{run}")
                firsts[side].append(first)
                cpus[side].append(cpu)
                if side == "this":
                    starts.append(run_started)
        base, this = statistics.median(firsts["baseline"]), statistics.median(firsts["this"])
        base_cpu, this_cpu = statistics.median(cpus["baseline"]), statistics.median(cpus["this"])
        start = statistics.median(starts)
        print(f"| {name} | {base:.2f} s | {this:.2f} s | {this / base:.2f}× | {base_cpu:.2f} s | {this_cpu:.2f} s "
              f"| {start:.2f} s | {this - start:.2f} s |", flush=True)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--baseline", help=f"git revision to compare with (default {DEFAULT_BASELINE}; "
                        f"with --first-sample {FIRST_SAMPLE_BASELINE})")
    parser.add_argument("--command", action="append", help="arguments after `python -m wfeval` (repeatable)")
    parser.add_argument("--this", help="with --first-sample: a git revision to measure instead of the working tree "
                        "(edits made while the script runs then change nothing)")
    parser.add_argument("--store", type=Path, help="with --first-sample: the store both sides use (default: a "
                        "temporary one; a kept one keeps the game recordings between runs of this script)")
    parser.add_argument("--first-sample", nargs="*", choices=list(FIRST_SAMPLE), metavar="BENCHMARK",
                        help=f"time to the first generated sample instead (default: all of {', '.join(FIRST_SAMPLE)})")
    args = parser.parse_args()
    check_this_checkout()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}   cores: {os.cpu_count()}")
    if args.first_sample is not None:
        args.baseline = args.baseline or FIRST_SAMPLE_BASELINE
        print(f"median of {args.repeats} runs; baseline {args.baseline} (before) vs this checkout (now)\n")
        with tempfile.TemporaryDirectory() as tmp:
            trees = {"baseline": unpack(args.baseline, Path(tmp) / "baseline"),
                     "this": unpack(args.this, Path(tmp) / "this") if args.this else ROOT}
            first_sample(args.first_sample or list(FIRST_SAMPLE), trees, args.repeats, Path(tmp),
                         (args.store or Path(tmp) / "store").resolve())
        print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")
        return
    args.baseline = args.baseline or DEFAULT_BASELINE
    print(f"median of {args.repeats} runs, seconds; baseline {args.baseline} vs this checkout\n")
    print(f"{'python -m wfeval ...':44s} {'base':>6s} {'this':>6s} {'ratio':>6s} {'empty':>6s}"
          f"   cpu {'base':>6s} {'this':>6s} {'empty':>6s}   (empty: this checkout, empty schema cache)")
    with tempfile.TemporaryDirectory() as tmp:
        trees = {"baseline": unpack(args.baseline, Path(tmp) / "baseline"), "this": ROOT}
        for command in args.command or COMMANDS:
            compare(command, trees, args.repeats, Path(tmp) / "cache")
    print("\nfloors (no wfeval code):")
    floor("python -c pass", "pass", args.repeats)
    floor("import hydra, omegaconf", "import hydra, omegaconf", args.repeats)
    floor("import hydra, omegaconf, numpy", "import hydra, omegaconf, numpy", args.repeats)
    print(f"\nload average after: {' '.join(f'{x:.2f}' for x in os.getloadavg())}")


if __name__ == "__main__":
    main()
