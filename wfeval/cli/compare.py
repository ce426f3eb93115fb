"""``python -m wfeval.compare PATH... [--primary M] [--out DIR]``: a leaderboard of runs.

PATH is a run directory, a multirun sweep directory or any folder holding runs. Prints the
table and writes ``leaderboard.md`` and ``leaderboard.csv`` (default: into the single PATH
given, else the current directory); when the runs hold a usefulness measure (``goal_success``,
``policy_rank_correlation``) for at least 3 models, also which measure predicts it
(:mod:`wfeval.report.usefulness`: ``usefulness.md``, ``usefulness.csv``).
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wfeval.report.leaderboard import leaderboard, render_text, write_leaderboard
from wfeval.report.rows import find_results, load_document


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m wfeval.compare", description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--primary", default=None, help="measurement to sort by, e.g. gridworld.psnr")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        documents = [load_document(p) for p in find_results(args.paths)]
        board = leaderboard(documents, args.primary)
    except (FileNotFoundError, ValueError) as exc:
        print(f"wfeval.compare: {exc}", file=sys.stderr)
        return 2
    print(render_text(board))
    out = args.out or (args.paths[0] if len(args.paths) == 1 and args.paths[0].is_dir() else Path.cwd())
    md, table = write_leaderboard(board, out)
    print(f"\nwrote {md} and {table}")
    from wfeval.report import usefulness

    useful = usefulness.usefulness(documents)  # which measure predicts goal_success / policy_rank_correlation
    if useful:
        md, table = usefulness.write_usefulness(useful, out)
        print(f"\n{usefulness.render_text(useful)}\n\nwrote {md} and {table}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
