"""``python -m wfeval.merge SHARD_RUN... --out DIR``: combine shard runs into one run.

Give the shard run directories (``run.shard=0/n`` … ``n-1/n``), or a sweep directory holding
them (a merged run found below it, such as the sweep's own ``merged``, is left out). The merged
run's results equal the unsharded run's. A sweep over shards merges itself at its end
(``<sweep>/merged``), so ``python -m wfeval -m run.shard=0/2,1/2`` is the whole recipe.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wfeval.cli.command import command
from wfeval.pipeline.merge_shards import is_merge, merge_shards
from wfeval.pipeline.stored import StoredRunError
from wfeval.report.rows import find_results
from wfeval.storage.outputs import OutputRefused


@command("wfeval.merge")
def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m wfeval.merge", description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args(argv)
    try:
        given = {path.resolve() for path in args.paths}
        run_dirs = [p.parent for p in find_results(args.paths) if p.parent.resolve() != args.out.resolve()
                    and (p.parent.resolve() in given or not is_merge(p.parent))]
        document = merge_shards(run_dirs, args.out)
    except (FileNotFoundError, StoredRunError, OutputRefused) as exc:
        print(f"wfeval.merge: {exc}", file=sys.stderr)
        return 2
    print(f"merged {len(run_dirs)} shards into {args.out} "
          f"({document.benchmark.n_samples} samples; eligible: {'yes' if document.evidence.eligible else 'no'})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
