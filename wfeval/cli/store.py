"""``python -m wfeval.store [--store DIR] {du,prune}``: the artifact store's size, and pruning.

``du`` shows what the store holds (objects by codec, on disk and decoded, generation records,
cached metric results, recordings, decoded-file records) and how much of it the kept runs
reference; dataset files that runs read in place (never copied) are counted apart. ``prune`` removes
objects by age (``--older-than 30d``) or down to a size (``--max-size 20G``, oldest first), never
one that a kept run references: every run folder under ``--runs`` (default ``outputs/runs`` and
``outputs/multirun``) references objects through its ``generations.jsonl`` (also the one a run
still in progress is writing) and its ``metrics.jsonl`` (the files a metric row names; a ref to a
dataset file read in place keeps nothing: the store holds no copy of it). I3D features live in
their own cache folder (``metric.fvd.feature_dir``), which ``prune`` never touches. Generation records
and cached metric results that name a removed object are removed with it (they would be
regenerated / recomputed). ``--dry-run`` lists without removing.
"""

from __future__ import annotations

import argparse
import os
import sys
from pathlib import Path

from wfeval.cli.command import command
from wfeval.storage.usage import DEFAULT_RUNS, du, parse_age, parse_size, prune


@command("wfeval.store")
def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m wfeval.store", description=__doc__.split("\n\n")[0])
    parser.add_argument("--store", default=os.environ.get("WFEVAL_STORE", "outputs/store"),
                        help="the store folder (default $WFEVAL_STORE, else outputs/store)")
    parser.add_argument("--runs", action="append", default=None, metavar="DIR",
                        help=f"folder of kept runs (repeatable; default {' and '.join(DEFAULT_RUNS)})")
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("du", help="what the store holds and what kept runs reference")
    p = sub.add_parser("prune", help="remove unreferenced objects by age and/or down to a size")
    p.add_argument("--older-than", type=parse_age, default=None, metavar="AGE",
                   help="objects not written or reused for AGE (12h, 30d, 2w; a bare number is days)")
    p.add_argument("--max-size", type=parse_size, default=None, metavar="SIZE",
                   help="remove the oldest unreferenced objects until the objects fit in SIZE (500M, 20G)")
    p.add_argument("--dry-run", action="store_true", help="say what would be removed, remove nothing")
    args = parser.parse_args(argv)
    store = Path(args.store).expanduser().resolve()
    if not store.is_dir():
        print(f"error: {store} is not a store folder (give --store DIR or set WFEVAL_STORE)", file=sys.stderr)
        return 2
    roots = [Path(r).expanduser().resolve() for r in (args.runs or DEFAULT_RUNS)]
    if args.command == "du":
        du(store, roots)
        return 0
    try:
        prune(store, roots, older_than=args.older_than, max_size=args.max_size, dry_run=args.dry_run)
    except ValueError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    return 0


if __name__ == "__main__":
    sys.exit(main())
