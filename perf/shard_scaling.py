"""Wall time of one job against two parallel shards of the same work (joblib launcher).

Run: ``python perf/shard_scaling.py [--samples 512] [--delay-ms 4]``

Both sides evaluate the same samples with the same model from an empty store, as separate
``python -m wfeval`` processes, measured side by side in one run: (a) one job; (b)
``-m run.shard=0/2,1/2 hydra/launcher=joblib hydra.launcher.n_jobs=2``, including the automatic
merge. The model is the oracle with an optional per-sample delay standing in for model cost
(``tests/support`` provides it).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SUPPORT = ROOT / "tests" / "support"


def timed(args: list[str], cwd: Path) -> float:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(SUPPORT), str(ROOT)])}
    started = time.perf_counter()
    subprocess.run([sys.executable, "-m", "wfeval", *args], cwd=cwd, env=env, check=True,
                   stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    return time.perf_counter() - started


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--samples", type=int, default=512)
    parser.add_argument("--delay-ms", type=float, default=4.0)
    args = parser.parse_args()
    common = [f"hydra.searchpath=[file://{SUPPORT / 'conf'}]", "model=slow_oracle",
              f"model.delay_s={args.delay_ms / 1000}", f"benchmark.num_samples={args.samples}", "run.progress=off"]
    with tempfile.TemporaryDirectory() as tmp:
        work = Path(tmp)
        one = timed([*common, f"run.store_dir={work / 'store1'}"], work)
        two = timed(["-m", *common, f"run.store_dir={work / 'store2'}", "run.shard=0/2,1/2",
                     "hydra/launcher=joblib", "hydra.launcher.n_jobs=2"], work)
    print(f"samples: {args.samples}, model cost: {args.delay_ms} ms/sample, cores: {os.cpu_count()}")
    print(f"1 job               {one:7.2f} s")
    print(f"2 shards (joblib)   {two:7.2f} s   speed-up {one / two:4.2f}x (incl. process start and merge)")


if __name__ == "__main__":
    main()
