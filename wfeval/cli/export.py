"""``python -m wfeval.export PATH... [--format csv|json|md] [--out FILE]``: results as a table.

One row per run × measurement (value, interval, counts, eligibility). PATH is a run directory,
a sweep directory or any folder holding runs; without ``--out`` the table goes to stdout. Each
run's ``results.json`` is checked against its own rows as compare and report check it
(:func:`wfeval.pipeline.stored.verify_entries`): where they disagree the rows' numbers are written and
a line on stderr names the run and the measurements.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from wfeval.cli.command import command
from wfeval.report.numbers import fmt
from wfeval.report.escape import csv_text, markdown_table
from wfeval.report.rows import ROW_FIELDS, rows
from wfeval.storage.outputs import OutputRefused, refuse_run_files, write_output


def render(records: list[dict], fmt_name: str) -> str:
    if fmt_name == "json":
        return json.dumps(records, indent=2, ensure_ascii=False) + "\n"
    if fmt_name == "csv":
        return csv_text(ROW_FIELDS, [[r[f] for f in ROW_FIELDS] for r in records])
    return markdown_table(list(ROW_FIELDS), [[fmt(r[f]) for f in ROW_FIELDS] for r in records]) + "\n"


def _records(paths: list[Path]) -> list[dict]:
    """The rows of every run under ``paths``: the numbers of its own rows where an edited
    results.json says otherwise (named on stderr, as compare and report name it)."""
    from wfeval.config import register_schemas
    from wfeval.pipeline.stored import verify_entries
    from wfeval.report.runs import load_entries

    entries = load_entries(paths)
    register_schemas()  # a metric a run added with extra_metrics is read from its packaged config
    for line in verify_entries(entries):
        print(f"wfeval.export: {line}", file=sys.stderr)
    return [r for entry in entries for r in rows(entry.document, entry.run_dir)]


@command("wfeval.export")
def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m wfeval.export", description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--format", choices=("csv", "json", "md"), default="csv")
    parser.add_argument("--out", type=Path, default=None)
    args = parser.parse_args(argv)
    try:
        if args.out:
            refuse_run_files(args.out)
        records = _records(args.paths)
    except (FileNotFoundError, ValueError, OutputRefused) as exc:
        print(f"wfeval.export: {exc}", file=sys.stderr)
        return 2
    text = render(records, args.format)
    if args.out:
        write_output(args.out, text)
    else:
        sys.stdout.write(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
