"""``python -m wfeval.compare PATH... [--primary M] [--out DIR]``: a leaderboard of runs.

PATH is a run directory, a multirun sweep directory or any folder holding runs. Prints the
table and writes ``leaderboard.md`` and ``leaderboard.csv`` (default: into the single PATH
given, else the current directory).
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

from wfeval.report.leaderboard import leaderboard, render_text
from wfeval.report.rows import find_results, load_document, markdown_table


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
    out.mkdir(parents=True, exist_ok=True)
    (out / "leaderboard.md").write_text(markdown_table(board.header, board.body) + f"\n\n{board.legend}\n",
                                        encoding="utf-8")
    with (out / "leaderboard.csv").open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(board.header)
        writer.writerows(board.body)
    print(f"\nwrote {out / 'leaderboard.md'} and {out / 'leaderboard.csv'}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
