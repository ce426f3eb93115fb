"""``python -m wfeval.compare PATH... [--sort KEY] [--baseline MODEL] [--gate MEASURE[=MARGIN]] [--out DIR]``:
a leaderboard of runs, paired comparisons on the same samples, and a regression gate.

PATH is a run folder, a sweep folder or any folder holding runs. Prints the leaderboard (models as
rows, benchmarks as columns, wrapped to ``--width``) sorted by ``--sort`` (``gridworld.ssim``,
``score``, ``<benchmark>.score``; default: each benchmark's primary measurement). Given exactly two
runs, or a ``--baseline``, also the paired differences ``A − B`` on the shared samples (paired
bootstrap interval, permutation p-value, Holm). ``--gate`` (repeatable) exits 1 when A regressed
beyond the margin on a gated measure, listing the samples (:mod:`wfeval.report.paired.gate`).
Writes only with ``--out DIR`` (``leaderboard.md``, ``.csv``, ``comparisons.json``), never into a run
folder it reads. With ``goal_success`` or ``policy_rank_correlation`` for 3+ models: which measure predicts it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from wfeval.cli.command import command
from wfeval.storage.outputs import OutputRefused, refuse_run_files, write_output


def _parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="python -m wfeval.compare", description=__doc__.splitlines()[0])
    parser.add_argument("paths", nargs="+", type=Path, metavar="PATH", help="run folder(s) or sweep folder(s)")
    parser.add_argument("--sort", "--primary", dest="sort", default=None, metavar="KEY",
                        help="rank by this measurement (gridworld.ssim), by score, or by <benchmark>.score")
    parser.add_argument("--baseline", default=None, metavar="MODEL",
                        help="compare every model with this one (a row's name, e.g. static), paired on shared samples")
    parser.add_argument("--out", type=Path, default=None, metavar="DIR",
                        help="write leaderboard.md, leaderboard.csv (and comparisons.json) into DIR")
    parser.add_argument("--width", type=int, default=None, help="text width (default: the terminal's)")
    parser.add_argument("--resamples", type=int, default=10_000, help="bootstrap resamples and permutations")
    parser.add_argument("--alpha", type=float, default=0.05, help="significance level after Holm's correction")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--gate", action="append", default=[], metavar="MEASURE[=MARGIN]",
                        help="exit 1 when A (or each row against --baseline) regressed on MEASURE beyond MARGIN")
    return parser


def _refuse_input_folder(out: Path, entries) -> str | None:
    try:
        refuse_run_files(out, folder=True)  # any run's folder, read or not
    except OutputRefused as exc:
        return str(exc)
    target = out.resolve()
    for entry in entries:
        run = entry.run_dir.resolve() if entry.run_dir is not None else None
        if run is not None and (target == run or run in target.parents):
            return f"--out {out} is inside the run folder {entry.run_dir}, which compare only reads; choose another folder"
    return None


@command("wfeval.compare")
def main(argv: list[str]) -> int:
    args = _parser().parse_args(argv)
    from wfeval.report import usefulness, votes
    from wfeval.report.leaderboard import leaderboard, render_text, write_leaderboard
    from wfeval.report.paired import NotComparable, gate
    from wfeval.config import register_schemas
    from wfeval.pipeline.stored import verify_entries
    from wfeval.report.runs import load_entries

    try:
        entries = load_entries(args.paths)
        register_schemas()  # a metric a run added with extra_metrics is read from its packaged config
        for line in verify_entries(entries):  # the numbers the paired comparison reads, or why not
            print(f"wfeval.compare: {line}", file=sys.stderr)
        board = leaderboard(entries, args.sort)
        arena = votes.on_board(board, entries)  # people's votes (python -m wfeval.arena): a column
    except (FileNotFoundError, ValueError) as exc:
        print(f"wfeval.compare: {exc}", file=sys.stderr)
        return 2
    if args.out is not None and (why := _refuse_input_folder(args.out, entries)):
        print(f"wfeval.compare: {why}", file=sys.stderr)
        return 2
    width = args.width
    print(render_text(board, width))
    try:
        comparisons, text = _comparisons(board, entries, args, width)
        findings = gate.check(comparisons, [gate.parse_gate(g) for g in args.gate], args.alpha) if args.gate else []
    except (NotComparable, ValueError) as exc:
        print(f"\nwfeval.compare: cannot {'gate' if args.gate else 'compare'}: {exc}", file=sys.stderr)
        return 2
    if text:
        print("\n" + text)
    # which measure predicts goal_success / policy_rank_correlation, across at least 3 models
    scored = [e for e in entries if e.document is not None]
    useful = usefulness.usefulness([e.document for e in scored], run_dirs=[e.run_dir for e in scored])
    if useful:
        print("\n" + usefulness.render_text(useful))
    if arena:
        print("\n" + votes.render_text(arena))
    if args.out is not None:
        written = write_leaderboard(board, args.out)
        if comparisons:
            written.append(write_output(args.out / "comparisons.json",
                                        json.dumps([c.to_dict(args.alpha) for c in comparisons], indent=1) + "\n"))
        if useful:
            written += usefulness.write_usefulness(useful, args.out)
        print(f"\nwrote {', '.join(map(str, written))}")
    if findings:
        print("\n" + gate.render(findings))
    return 1 if any(f.failed for f in findings) else 0


def _comparisons(board, entries, args, width):
    """The paired comparisons asked for: two runs given, or every row against ``--baseline``."""
    from wfeval.report.leaderboard import fit_line, terminal_width, wrap_table
    from wfeval.report.paired import adjust_family, compare_runs, comparison_table, describe

    pairs = []
    if args.baseline is not None:
        base = [r for r in board.rows if r.label == args.baseline or r.name == args.baseline
                or r.key.get("model") == args.baseline]
        if len(base) != 1:
            names = ", ".join(r.label for r in board.rows)
            raise ValueError(f"--baseline {args.baseline!r} {'names several rows' if base else 'is no row'}; "
                             f"rows: {names}")
        for column in board.columns:
            if column.key not in base[0].entries:
                continue
            for row in board.rows:
                if row is not base[0] and column.key in row.entries:
                    pairs.append((row.entries[column.key], base[0].entries[column.key], row.label, base[0].label))
    elif len(args.paths) == 2 and len(entries) == 2:  # compare RUN_A RUN_B
        first, second = entries  # in the order given
        label = {id(e): r.label for r in board.rows for e in r.entries.values()}
        pairs.append((first, second, label[id(first)], label[id(second)]))
    if not pairs:
        return [], ""
    comparisons = [compare_runs(a, b, label_a=la, label_b=lb, n_resamples=args.resamples, seed=args.seed,
                                adjust=False) for a, b, la, lb in pairs]
    adjust_family(comparisons)
    blocks, width = [], width or terminal_width()
    for comparison in comparisons:
        lines = []
        for line in describe(comparison, args.alpha):
            if line == "TABLE":
                lines.append(wrap_table(*comparison_table(comparison, args.alpha), width, keep=1))
            else:
                lines.append(fit_line(line, width))
        blocks.append("\n".join(lines))
    return comparisons, "\n\n".join(blocks)


if __name__ == "__main__":
    sys.exit(main())
