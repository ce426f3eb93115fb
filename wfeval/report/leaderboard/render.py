"""The board as text (wrapped to the terminal's width), Markdown and CSV, and the files
``leaderboard.md`` / ``leaderboard.csv``: the same tables (:meth:`Board.tables`) in the same order.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from wfeval.report.leaderboard.model import Board, rank_text
from wfeval.report.escape import csv_text, markdown_table, md_inline, plain
from wfeval.storage.rundir import FILES
from wfeval.storage.outputs import write_output  # never a run's own file; never through a link

DEFAULT_WIDTH = 100


def terminal_width() -> int:
    """The terminal's width (``COLUMNS`` or the tty), at least 60; 100 when not a terminal."""
    return max(60, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)


def wrap_table(header: list[str], body: list[list[str]], width: int, keep: int = 2) -> str:
    """A text table that fits ``width``: data columns beyond it continue in further blocks, each
    repeating the first ``keep`` columns (rank, model). Cells are :func:`~wfeval.report.escape.plain`:
    one line, no control characters (a run folder's text never moves the terminal's cursor)."""
    header, body = [plain(c) for c in header], [[plain(c) for c in r] for r in body]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    gap = 2
    blocks, current = [], list(range(keep))
    used = sum(widths[:keep]) + gap * (keep - 1)
    for i in range(keep, len(header)):
        if len(current) > keep and used + gap + widths[i] > width:
            blocks.append(current)
            current, used = list(range(keep)), sum(widths[:keep]) + gap * (keep - 1)
        current.append(i)
        used += gap + widths[i]
    blocks.append(current)
    out = []
    for block in blocks:
        lines = ["  ".join(r[i].ljust(widths[i]) for i in block).rstrip() for r in [header, *body]]
        lines.insert(1, "-" * max(len(line) for line in lines))
        out.append("\n".join(lines))
    return "\n\n".join(out)


def render_text(board: Board, width: int | None = None) -> str:
    width = width or terminal_width()
    parts = []
    for title, header, body, column in board.tables():
        parts.append(f"{fit_line(title, width)}\n" + wrap_table(header, body, width))
        reasons = board.reason_lines(column) if column is not None else []
        if reasons:
            parts.append("\n".join(fit_line(line, width) for line in reasons))
    parts.append("\n".join(fit_line(line, width) for line in board.legend()))
    return "\n\n".join(parts)


def fit_line(line: str, width: int) -> str:
    """A long line wrapped at spaces, continuation lines indented."""
    import textwrap

    line = plain(line)
    indent = " " * (len(line) - len(line.lstrip()) + 4)
    return "\n".join(textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False)) or line


def render_markdown(board: Board) -> str:
    parts = []
    for title, header, body, column in board.tables():
        parts += [f"## {md_inline(title)}", "", markdown_table(header, body), ""]
        reasons = board.reason_lines(column) if column is not None else []
        parts += [*map(_md_line, reasons), ""] if reasons else []
    for line in board.legend():  # the full names as a list, the rest as paragraphs
        parts += [f"- {md_inline(line.strip())}"] if line.startswith("  ") else [md_inline(line), ""]
    return "\n".join(parts).rstrip() + "\n"


def _md_line(line: str) -> str:
    """A reason line (``not eligible (…):`` or ``  - reason``) as inert Markdown, its list mark kept."""
    if line.startswith("  - "):
        return "  - " + md_inline(line[4:])
    return md_inline(line)


def render_csv(board: Board) -> str:
    """One line per row (model): every measurement of every column with its interval and counts,
    each column's score, eligibility and run folder; full precision."""
    header = ["rank", "model", "name"]
    for c in board.columns:
        for m in c.measurements:
            base = f"{c.key}.{m}"
            header += [base, f"{base}.ci_low", f"{base}.ci_high", f"{base}.n_valid", f"{base}.n_total"]
        header += [f"{c.key}.rank", f"{c.key}.score", f"{c.key}.eligible", f"{c.key}.ladder", f"{c.key}.run"]
    lines = []
    for row in board.rows:
        line = [rank_text(row), row.label, row.name]
        for c in board.columns:
            for m in c.measurements:
                cell = board.cell(row, c, m)
                if cell.value is None:
                    line += [cell.missing or "", "", "", str(cell.n_valid) if cell.n_total else "",
                             str(cell.n_total) if cell.n_total else ""]
                else:
                    line += [repr(cell.value), "" if cell.low is None else repr(cell.low),
                             "" if cell.high is None else repr(cell.high), str(cell.n_valid), str(cell.n_total)]
            score = board.score(row, c)
            entry = row.entries.get(c.key)
            line += ["" if entry is None else board.column_rank(row, c), "" if score is None else repr(score),
                     "" if entry is None else board.eligible_text(row, c).split(" ", 1)[0],
                     "" if entry is None else (board.ladder(row, c).rung or ""),
                     "" if entry is None else entry.folder]
        lines.append(line)
    return csv_text(header, lines)


def write_leaderboard(board: Board, folder: Path) -> list[Path]:
    """``<folder>/leaderboard.md`` and ``leaderboard.csv`` (the sweep's and ``compare --out``'s: one writer)."""
    md, table = folder / FILES.leaderboard_md, folder / FILES.leaderboard_csv
    return [write_output(md, render_markdown(board)), write_output(table, render_csv(board))]
