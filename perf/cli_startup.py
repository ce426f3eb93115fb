"""Start-up time of ``python -m wfeval --help`` and ``--cfg job``, this checkout against a baseline.

Run: ``python perf/cli_startup.py [--repeats 10] [--baseline REV] [--command="model=static --cfg job"]``

The baseline is a commit of this repository (default: the last one before the start-up work of
issue 16), unpacked with ``git archive`` into a temporary folder and run with the same
interpreter, so both sides share the installed Hydra, numpy and torch. The two sides alternate
run by run (a shared machine's load falls on both), with a third side: this checkout with an empty
schema cache (``WFEVAL_CACHE``; the first run after any change to wfeval's sources). Printed per
command: median wall and median CPU (user + system) seconds of each side, the ratio this/baseline,
and whether all sides printed byte-identical output with the same exit status; then the floors no
wfeval change can go below: the interpreter starting, and importing Hydra and OmegaConf. The load
average is printed before and after.
"""

from __future__ import annotations

import argparse
import itertools
import os
import resource
import shlex
import statistics
import subprocess
import sys
import tarfile
import tempfile
import time
from io import BytesIO
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
#: main just before issue 16 item 6 (lazy schema nodes): --help 0.6-0.7 s here
DEFAULT_BASELINE = "3212a89"
_EMPTY = itertools.count()
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


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=10)
    parser.add_argument("--baseline", default=DEFAULT_BASELINE, help="git revision to compare with")
    parser.add_argument("--command", action="append", help="arguments after `python -m wfeval` (repeatable)")
    args = parser.parse_args()
    check_this_checkout()
    print(f"load average before: {' '.join(f'{x:.2f}' for x in os.getloadavg())}   cores: {os.cpu_count()}")
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
