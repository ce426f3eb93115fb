"""``python -m wfeval.report PATH... [--out FILE] [--title TEXT]``: one self-contained HTML report.

PATH is a run folder, a sweep folder (every run below it) or several of them. The page holds
the leaderboard (models × benchmarks), paired comparisons with a baseline (``--baseline``), and
per benchmark a chart per metric, quality against the horizon, the best / median / worst samples
as moving pictures, a viewer of the same sample across every model, failures and a filterable
per-sample table; then provenance. It needs no network to open. Default output:
``report.html`` in the single PATH given, else in the current directory.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from wfeval.cli.command import command
from wfeval.config.extras import install_command
from wfeval.storage.rundir import FILES


@command("wfeval.report")
def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m wfeval.report", description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="run folder(s) or sweep folder(s)")
    parser.add_argument("--out", type=Path, default=None, help="the HTML file to write")
    parser.add_argument("--title", default=None, help="page title (default: model and benchmark)")
    parser.add_argument("--baseline", default=None, metavar="MODEL",
                        help="compare every model with this one (a leaderboard row's name; default: each "
                             "benchmark's top-ranked model)")
    args = parser.parse_args(argv)
    out = args.out or ((args.paths[0] if len(args.paths) == 1 and args.paths[0].is_dir() else Path.cwd())
                       / FILES.report)
    try:
        from wfeval.pipeline.stored import verify_entries
        from wfeval.report.html import write_report

        def verify(entries) -> None:  # the numbers the paired comparisons read, as compare shows them
            for line in verify_entries(entries):
                print(f"wfeval.report: {line}", file=sys.stderr)

        path = write_report(args.paths, out, title=args.title, baseline=args.baseline, verify=verify)
    except ModuleNotFoundError as exc:
        print(f"wfeval.report: {exc.name} is not installed; install the report extra: {install_command('report')}",
              file=sys.stderr)
        return 2
    except (FileNotFoundError, ValueError) as exc:
        print(f"wfeval.report: {exc}", file=sys.stderr)
        return 2
    print(f"wrote {path} ({path.stat().st_size / 1e6:.2f} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
