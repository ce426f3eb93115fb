"""A warm one-sample run as a whole process, this checkout against a baseline (issue 51 item 2).

Run: ``python perf/warm_run.py [--baseline REV] [--repeats 5] [--command "benchmark.num_samples=1 metric=[psnr]"]``

The command (by default ``python -m wfeval benchmark.num_samples=1 'metric=[psnr]'``) runs on a warm
store: each side first runs it once, untimed (the schema, template and composition caches filled, the
gridworld episodes and the model's generation kept in the store both sides share). Each side's wfeval
modules are compiled to byte code first (``compileall``, as installing a wheel does and as Python does on
the first import), so that ``PYTHONDONTWRITEBYTECODE=1`` in the environment does not make every process
compile them again; ``--no-bytecode`` removes instead the byte code of both sides' ``wfeval`` folders
(``__pycache__``, git-ignored) first: the figure of such an environment. Then the two sides
alternate run by run (a shared machine's load falls on both): the baseline (a commit of this
repository unpacked with ``git archive``, run with the same interpreter) and this checkout. Printed:
the median wall and CPU (user + system) seconds of each side, the median of the pairwise ratios
this/baseline, the load average before and after, and whether the run folders' ``results.json``,
``results.md`` and ``report.html`` are the same on both sides once the times of day, the durations,
the run folders' paths and the checkouts' paths are masked.
"""

from __future__ import annotations

import argparse
import compileall
import difflib
import os
import re
import shlex
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from cli_startup import ROOT, timed, unpack  # noqa: E402 - perf/ is not a package

#: main before issue 51 item 2 (torch imported for psnr under run.device=auto)
DEFAULT_BASELINE = "bbe009d"
COMMAND = "benchmark.num_samples=1 metric=[psnr]"
COMPARED = ("results.json", "results.md", "report.html")
#: times of day, durations and the seconds a phase took: what differs between two runs of one command
MASKS = ((re.compile(r"\d{4}-\d\d-\d\d[T ]\d\d:\d\d(:\d\d(\.\d+)?)?([+-]\d\d:\d\d|Z)?"), "#"),
         (re.compile(r'("[A-Za-z_]*(?:seconds|duration|elapsed)[A-Za-z_]*"\s*:\s*)[-+0-9.e]+'), r"\1#"),
         (re.compile(r"\b\d+(\.\d+)?\s?(ms|s)\b"), "# s"))


def masked(path: Path, paths: dict[str, str]) -> str:
    """The file's text with the run's times and ``paths`` (real path -> name) masked."""
    text = path.read_text(encoding="utf-8")
    for real, name in paths.items():
        text = text.replace(real, name)
    for mask, replacement in MASKS:
        text = mask.sub(replacement, text)
    return text


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", default=DEFAULT_BASELINE)
    parser.add_argument("--repeats", type=int, default=5)
    parser.add_argument("--command", default=COMMAND, help="the overrides after python -m wfeval")
    parser.add_argument("--no-bytecode", action="store_true",
                        help="remove wfeval's byte code on both sides first instead of compiling it")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp_name:
        tmp = Path(tmp_name)
        trees = {"baseline": unpack(args.baseline, tmp / "baseline"), "this": ROOT}
        store = tmp / "store"
        env = {"WFEVAL_CACHE": str(tmp / "cache")}

        def run(side: str, label: str) -> tuple[float, float]:
            folder = tmp / side / label / "run"  # one run name on both sides: the run id is the same
            command = [sys.executable, "-m", "wfeval", *shlex.split(args.command),
                       f"hydra.run.dir={folder}", f"run.store_dir={store}"]
            wall, cpu, output, status = timed(command, trees[side], {**env, "PYTHONPATH": str(trees[side])})
            if status != 0:
                sys.exit(f"{side}: exit {status}\n{output.decode(errors='replace')[-3000:]}")
            return wall, cpu

        for tree in trees.values():
            if args.no_bytecode:
                for folder in (tree / "wfeval").rglob("__pycache__"):
                    shutil.rmtree(folder, ignore_errors=True)
            else:
                compileall.compile_dir(str(tree / "wfeval"), quiet=1, workers=0)
        load_before = os.getloadavg()
        for side in trees:
            run(side, "warm-up")
        walls: dict[str, list[float]] = {side: [] for side in trees}
        cpus: dict[str, list[float]] = {side: [] for side in trees}
        for repeat in range(args.repeats):
            for side in trees:
                wall, cpu = run(side, str(repeat))
                walls[side].append(wall)
                cpus[side].append(cpu)
        load_after = os.getloadavg()
        print(f"python -m wfeval {args.command}   (store warm; {args.repeats} alternating runs a side; "
              f"byte code {'as the environment leaves it' if args.no_bytecode else 'compiled first'}; "
              f"PYTHONDONTWRITEBYTECODE={os.environ.get('PYTHONDONTWRITEBYTECODE', '')!r})")
        print(f"load average before {load_before[0]:.1f} / after {load_after[0]:.1f} "
              f"({os.cpu_count()} cores)")
        print(f"{'side':10s} {'wall s (median)':>16s} {'cpu s (median)':>15s}   wall, each run")
        for side in trees:
            print(f"{side:10s} {statistics.median(walls[side]):16.3f} {statistics.median(cpus[side]):15.3f}   "
                  + " ".join(f"{w:.2f}" for w in walls[side]))
        ratios = [t / b for t, b in zip(walls["this"], walls["baseline"])]
        cpu_ratios = [t / b for t, b in zip(cpus["this"], cpus["baseline"])]
        print(f"this/baseline, median of the pairs: wall {statistics.median(ratios):.2f}x, "
              f"cpu {statistics.median(cpu_ratios):.2f}x")
        for name in COMPARED:
            texts = [masked(tmp / side / "0" / "run" / name, {str(tmp / side / "0" / "run"): "<run>",
                                                              str(trees[side]): "<tree>"}) for side in trees]
            print(f"{name}: {'identical' if texts[0] == texts[1] else 'DIFFERENT'} (times and paths masked)")
            if texts[0] != texts[1]:
                sys.stdout.writelines(list(difflib.unified_diff(*(t.splitlines(True) for t in texts), n=0))[:20])


if __name__ == "__main__":
    main()
