"""Leaderboard: models as rows, benchmarks (with their task and protocol) as columns.

One :class:`Board` is built from the runs (:class:`~wfeval.report.runs.Entry`) and rendered the
same way everywhere — the terminal (:func:`render_text`, wrapped to a width), Markdown, CSV and
the HTML report — so they show the same rows in the same order with the same numbers.

* **Rows** are models: runs whose overrides differ only in what chooses the column (the benchmark,
  task, protocol) share a row. A row is named by what differs between the rows' overrides
  (``model.checkpoint=…/step_2000``; the bare value for ``model``), never two the same (a run
  folder tells apart two runs of the same overrides); long names are shortened, the full ones
  given in the legend.
* **Columns** are benchmarks (``gridworld``, ``gridworld/goal_reaching``, ``atari_pong@autoregressive``):
  each has one headline, the primary measurement of its scorecard (for a planning task, goal
  success), every measurement, the score and the eligibility.
* **Ranking** by any measurement of any column or by a column's score (``sort``), by default by
  the first column's primary measurement, in its direction. A value whose interval overlaps the
  best one's (and is not equal to it) is marked ``≈``; never for a measurement without direction.
"""

from __future__ import annotations

import csv
import io
import shutil
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from wfeval.report.numbers import HYPHEN, fmt, number
from wfeval.report.rows import markdown_table
from wfeval.report.runs import Entry, column_key, row_key
from wfeval.report.units import unit_of
from wfeval.results import headline
from wfeval.results.evidence import grouped_reasons
from wfeval.storage.rundir import FILES

TIE = "≈"
SCORE = "score"
MAX_LABEL = 40
DEFAULT_WIDTH = 100


@dataclass
class Column:
    key: str
    benchmark: str
    measurements: list[str] = field(default_factory=list)  # metric ids, in order of first appearance
    primary: str | None = None
    directions: dict[str, bool | None] = field(default_factory=dict)
    units: dict[str, str] = field(default_factory=dict)

    def measurement(self, metric: str) -> str:
        """The measurement's id as results.json spells it (``gridworld.psnr``)."""
        return f"{self.benchmark}.{metric}"

    def heading(self, metric: str) -> str:
        unit = self.units.get(metric)
        return f"{metric} ({unit})" if unit else metric


@dataclass
class Row:
    key: dict[str, str]
    entries: dict[str, Entry]  # column key -> run
    label: str = ""
    name: str = ""
    rank: int | None = None
    order: int = 0


@dataclass
class Cell:
    value: float | None
    low: float | None
    high: float | None
    n_valid: int
    n_total: int
    text: str
    tie: bool = False
    missing: str = ""  # "no run" / "not measured" / "n/a"


@dataclass
class Board:
    columns: list[Column]
    rows: list[Row]
    sort: tuple[str, str]  # (column key, metric id or SCORE)
    shortened: dict[str, str]  # label -> full name, for labels that do not say everything
    ranks: dict[str, dict[int, int]] = field(default_factory=dict)  # column key -> id(row) -> place

    # -- cells ---------------------------------------------------------------------------------
    def column(self, key: str) -> Column:
        return next(c for c in self.columns if c.key == key)

    def aggregate(self, row: Row, column: Column, metric: str) -> dict[str, Any] | None:
        entry = row.entries.get(column.key)
        return entry.results.get(column.measurement(metric)) if entry is not None else None

    def cell(self, row: Row, column: Column, metric: str) -> Cell:
        entry = row.entries.get(column.key)
        if entry is None:
            return Cell(None, None, None, 0, 0, "no run", missing="no run")
        if entry.document is None:
            return Cell(None, None, None, 0, 0, f"run {entry.status}", missing="failed")
        agg = entry.results.get(column.measurement(metric))
        if agg is None:
            return Cell(None, None, None, 0, 0, "missing", missing="not measured")
        value = number(headline(agg))
        n_valid, n_total = int(agg.get("n_valid") or 0), int(agg.get("n_total") or 0)
        if value is None:
            return Cell(None, None, None, n_valid, n_total, "n/a", missing="n/a")
        ci = agg.get("confidence_interval") or {}
        low, high = number(ci.get("low")), number(ci.get("high"))
        text = fmt(value)
        if low is not None and high is not None:
            text += f" [{fmt(low)}, {fmt(high)}]"
        tie = self._tie(column, metric, value, low, high)
        if tie:
            text += f" {TIE}"
        if n_total and n_valid < n_total:
            text += f" ({n_valid}/{n_total})"
        return Cell(value, low, high, n_valid, n_total, text, tie)

    def _best(self, column: Column, metric: str) -> tuple[float, float | None, float | None] | None:
        higher = column.directions.get(metric)
        if higher is None:
            return None
        best = None
        for row in self.rows:
            agg = self.aggregate(row, column, metric)
            value = number(headline(agg)) if agg else None
            if value is None:
                continue
            if best is None or (value > best[0] if higher else value < best[0]):
                ci = agg.get("confidence_interval") or {}
                best = (value, number(ci.get("low")), number(ci.get("high")))
        return best

    def _tie(self, column: Column, metric: str, value: float, low: float | None, high: float | None) -> bool:
        """Worse than the column's best, but within the uncertainty: the intervals overlap."""
        best = self._best(column, metric)
        if best is None or value == best[0]:
            return False
        if None in (low, high, best[1], best[2]):
            return False
        return low <= best[2] and best[1] <= high  # type: ignore[operator]

    def score(self, row: Row, column: Column) -> float | None:
        entry = row.entries.get(column.key)
        return number(((entry.document or {}).get("scorecard") or {}).get("score")) if entry else None

    def score_text(self, row: Row, column: Column) -> str:
        entry = row.entries.get(column.key)
        if entry is None:
            return "no run"
        return fmt(self.score(row, column))

    def eligible_text(self, row: Row, column: Column) -> str:
        entry = row.entries.get(column.key)
        if entry is None:
            return "no run"
        if entry.document is None:
            return f"run {entry.status}"
        evidence = entry.document.get("evidence") or {}
        if evidence.get("eligible"):
            return "yes"
        n = len(self.reasons(row, column))
        return f"no ({n} reason{'' if n == 1 else 's'})"

    def reasons(self, row: Row, column: Column) -> list[str]:
        entry = row.entries.get(column.key)
        if entry is None or entry.document is None:
            return []
        document = entry.document
        return grouped_reasons(document.get("evidence") or {}, (document.get("benchmark") or {}).get("n_samples"))

    # -- ranking ---------------------------------------------------------------------------------
    def sort_value(self, row: Row, column: Column, metric: str) -> float | None:
        if metric == SCORE:
            return self.score(row, column)
        agg = self.aggregate(row, column, metric)
        return number(headline(agg)) if agg else None

    def ranked(self, rows: Sequence[Row], column_key_: str, metric: str) -> list[Row]:
        """``rows`` by ``metric`` of the column, in its direction (rows without a value last, in
        their order); each ranked row's place goes to :attr:`ranks` of that column."""
        column = self.column(column_key_)
        higher = True if metric == SCORE else column.directions.get(metric)

        def key(row: Row) -> tuple[int, float, int]:
            v = self.sort_value(row, column, metric)
            if v is None:
                return (1, 0.0, row.order)
            return (0, v if higher is False else -v, row.order)

        ordered = sorted(rows, key=key)
        places = self.ranks.setdefault(column.key, {})
        place = 0
        for row in ordered:
            if self.sort_value(row, column, metric) is not None:
                place += 1
                places[id(row)] = place
        return ordered

    def column_rows(self, column: Column) -> list[Row]:
        """The rows with a run in ``column``, ranked by the board's sort when it is this column's,
        else by the column's primary measurement."""
        present = [r for r in self.rows if column.key in r.entries]
        metric = self.sort[1] if self.sort[0] == column.key else column.primary
        return self.ranked(present, column.key, metric) if metric else present

    def column_rank(self, row: Row, column: Column) -> str:
        place = self.ranks.get(column.key, {}).get(id(row))
        return HYPHEN if place is None else str(place)

    # -- what the tables say -------------------------------------------------------------------
    def sort_label(self) -> str:
        column, metric = self.column(self.sort[0]), self.sort[1]
        if metric == SCORE:
            return f"{column.key} score (higher is better)"
        higher = column.directions.get(metric)
        how = {True: "higher is better", False: "lower is better"}.get(higher, "no direction: high to low")
        unit = column.units.get(metric)
        return f"{column.key}.{metric} ({unit + ', ' if unit else ''}{how})"

    def legend(self) -> list[str]:
        lines = [f"ranked by {self.sort_label()}; value [95% CI]; {TIE} = worse than the column's best but the "
                 "intervals overlap (not resolved by this many samples); (k/n) = the value rests on k of n "
                 "samples"]
        if len(self.columns) > 1:
            lines.append("columns: benchmark[/task][@protocol]; results of different columns are never ranked "
                         "together")
        if self.shortened:
            lines.append("full names:")
            lines += [f"  {label} = {name}" for label, name in self.shortened.items()]
        return lines

    def headline_table(self) -> tuple[list[str], list[list[str]]]:
        """rank, model, each column's primary measurement, eligible: one row per model."""
        header = ["rank", "model"] + [f"{c.key}: {c.heading(c.primary)}" if c.primary else c.key
                                      for c in self.columns] + ["eligible"]
        body = []
        for row in self.rows:
            cells = [self.cell(row, c, c.primary).text if c.primary else HYPHEN for c in self.columns]
            body.append([_rank(row), row.label, *cells, self._eligible_summary(row)])
        return header, body

    def _eligible_summary(self, row: Row) -> str:
        present = [c for c in self.columns if c.key in row.entries]
        no = [c.key for c in present if self.eligible_text(row, c) != "yes"]
        if not no:
            return "yes"
        return "no" if len(present) == 1 else f"no: {', '.join(no)}"

    def detail_table(self, column: Column) -> tuple[list[str], list[list[str]]]:
        """Every measurement of one column, its score and eligibility, the run folder."""
        header = ["rank", "model", "score", "eligible", *[column.heading(m) for m in column.measurements], "run"]
        body = []
        for row in self.column_rows(column):
            body.append([self.column_rank(row, column), row.label, self.score_text(row, column),
                         self.eligible_text(row, column), *[self.cell(row, column, m).text for m in column.measurements],
                         row.entries[column.key].folder])
        return header, body

    def tables(self) -> list[tuple[str, list[str], list[list[str]], Column | None]]:
        """(title, header, body, column) of every table: the headline (several columns), then one
        per column."""
        out: list[tuple[str, list[str], list[list[str]], Column | None]] = []
        if len(self.columns) > 1:
            out.append(("models × benchmarks: each benchmark's primary measurement", *self.headline_table(), None))
        for column in self.columns:
            out.append((self.column_title(column), *self.detail_table(column), column))
        return out

    def column_title(self, column: Column) -> str:
        metric = self.sort[1] if self.sort[0] == column.key else column.primary
        if metric is None:
            return column.key
        if metric == SCORE:
            return f"{column.key} (ranked by its score)"
        higher = column.directions.get(metric)
        how = {True: "higher is better", False: "lower is better"}.get(higher, "high to low")
        return f"{column.key} (ranked by {metric}, {how})"

    def reason_lines(self, column: Column) -> list[str]:
        """Why rows are not eligible, rows with the same reasons together."""
        groups: dict[tuple[str, ...], list[str]] = {}
        for row in self.column_rows(column):
            reasons = tuple(self.reasons(row, column))
            if reasons:
                groups.setdefault(reasons, []).append(row.label)
        lines = []
        for reasons, labels in groups.items():
            lines.append(f"not eligible ({', '.join(labels)}):")
            lines += [f"  - {r}" for r in reasons]
        return lines


def _rank(row: Row) -> str:
    return str(row.rank) if row.rank is not None else HYPHEN


# -- building ----------------------------------------------------------------------------------

def _columns(entries: Sequence[Entry]) -> list[Column]:
    columns: dict[str, Column] = {}
    for entry in entries:
        key = column_key(entry)
        column = columns.setdefault(key, Column(key, entry.benchmark))
        document = entry.document or {}
        prefix = f"{entry.benchmark}."
        for measurement in document.get("results") or {}:
            metric = measurement[len(prefix):] if measurement.startswith(prefix) else measurement
            if metric not in column.measurements:
                column.measurements.append(metric)
            info = (document.get("metrics") or {}).get(measurement) or {}
            column.directions.setdefault(metric, info.get("higher_is_better"))
            if metric not in column.units or not column.units[metric]:
                column.units[metric] = unit_of(document, measurement)
        primary = ((document.get("scorecard") or {}).get("primary"))
        if column.primary is None and primary and f"{prefix}{primary}" in (document.get("results") or {}):
            column.primary = str(primary)
    for column in columns.values():
        if column.primary is None:  # no scorecard: the first measurement that has a direction
            column.primary = next((m for m in column.measurements if column.directions.get(m) is not None),
                                  column.measurements[0] if column.measurements else None)
    return list(columns.values())


def _rows(entries: Sequence[Entry]) -> list[Row]:
    rows: list[Row] = []
    for entry in entries:
        key, column = row_key(entry), column_key(entry)
        for row in rows:  # the first row of this key without a run in this column
            if row.key == key and column not in row.entries:
                row.entries[column] = entry
                break
        else:
            rows.append(Row(key, {column: entry}, order=len(rows)))
    return rows


def _shorten_paths(values: list[str]) -> dict[str, str]:
    """Path-like values shortened to the fewest trailing components that still tell them apart."""
    parts = {v: v.rstrip("/").split("/") for v in set(values) if "/" in v}
    out = {}
    for value, mine in parts.items():
        keep = 1
        while keep < len(mine) and any(other[-keep:] == mine[-keep:] for v, other in parts.items() if v != value):
            keep += 1
        out[value] = value if keep >= len(mine) else "…/" + "/".join(mine[-keep:])
    return out


def _label_rows(rows: list[Row]) -> dict[str, str]:
    """Name each row by what differs between the rows; returns {shortened label: full label}."""
    keys: list[str] = []
    for row in rows:
        keys += [k for k in row.key if k not in keys and not k.startswith("#")]
    differing = [k for k in keys if len({row.key.get(k) for row in rows}) > 1]
    short = {k: _shorten_paths([row.key[k] for row in rows if k in row.key]) for k in differing}

    def label(row: Row, shorten: bool) -> str:
        parts = []
        for k in differing:
            if k in row.key:
                value = short[k].get(row.key[k], row.key[k]) if shorten else row.key[k]
                parts.append(value if k == "model" else f"{k}={value}")
        entry = next(iter(row.entries.values()))
        return " ".join(parts) or row.key.get("model") or entry.model_name

    full: dict[int, str] = {}
    for row in rows:
        entry = next(iter(row.entries.values()))
        row.name = " ".join(f"{k}={v}" for k, v in row.key.items() if not k.startswith("#")) or entry.model_name
        row.label, full[id(row)] = label(row, True), label(row, False)
    labels = [row.label for row in rows]
    for row in rows:  # the same overrides twice in a column: the run folders tell them apart
        if labels.count(row.label) > 1:
            where = " (" + ", ".join(e.folder for e in row.entries.values()) + ")"
            row.label += where
            full[id(row)] += where
    shortened = {}
    for row in rows:
        if len(row.label) > MAX_LABEL:
            row.label = f"{row.label[:MAX_LABEL - 6]}… #{row.order + 1}"
        if row.label != full[id(row)]:
            shortened[row.label] = full[id(row)]
    return shortened


def _resolve_sort(spec: str | None, columns: list[Column]) -> tuple[str, str]:
    if not columns:
        raise ValueError("no runs with results")
    if spec is None:
        column = next((c for c in columns if c.primary), columns[0])
        return column.key, column.primary or SCORE
    if spec == SCORE:
        if len(columns) > 1:
            raise ValueError(f"several benchmarks, several scores: sort by one of "
                             f"{', '.join(c.key + '.score' for c in columns)}")
        return columns[0].key, SCORE
    for column in columns:  # column key first (gridworld/goal_reaching.goal_success), then benchmark id
        for prefix in (column.key, column.benchmark):
            if spec.startswith(prefix + "."):
                metric = spec[len(prefix) + 1:]
                if metric == SCORE or metric in column.measurements:
                    return column.key, metric
    options = [f"{c.key}.{m}" for c in columns for m in c.measurements] + [f"{c.key}.score" for c in columns]
    if len(columns) == 1:
        options.append(SCORE)
    raise ValueError(f"cannot sort by {spec!r}: not a measurement of these runs; one of: {', '.join(options)}")


def leaderboard(entries: Sequence[Entry], sort: str | None = None) -> Board:
    """The board of ``entries`` sorted by ``sort`` (a measurement ``gridworld.ssim``, ``score``,
    ``<column>.score``; default: the first column's primary measurement). Each column's own table
    ranks its rows by that column's primary measurement (by ``sort`` in the column it names)."""
    columns = _columns(entries)
    rows = _rows(entries)
    board = Board(columns, rows, _resolve_sort(sort, columns), {})
    board.shortened = _label_rows(rows)
    board.rows = board.ranked(rows, *board.sort)
    for row in board.rows:
        row.rank = board.ranks[board.sort[0]].get(id(row)) if board.sort[0] in row.entries else None
    for column in columns:
        board.column_rows(column)  # each column's own ranks
    return board


# -- rendering ---------------------------------------------------------------------------------

def terminal_width() -> int:
    """The terminal's width (``COLUMNS`` or the tty), at least 60; 100 when not a terminal."""
    return max(60, shutil.get_terminal_size((DEFAULT_WIDTH, 24)).columns)


def wrap_table(header: list[str], body: list[list[str]], width: int, keep: int = 2) -> str:
    """A text table that fits ``width``: data columns beyond it continue in further blocks, each
    repeating the first ``keep`` columns (rank, model)."""
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

    indent = " " * (len(line) - len(line.lstrip()) + 4)
    return "\n".join(textwrap.wrap(line, width, subsequent_indent=indent, break_on_hyphens=False)) or line


def render_markdown(board: Board) -> str:
    parts = []
    for title, header, body, column in board.tables():
        parts += [f"## {title}", "", markdown_table(header, body), ""]
        reasons = board.reason_lines(column) if column is not None else []
        parts += [*reasons, ""] if reasons else []
    for line in board.legend():  # the full names as a list, the rest as paragraphs
        parts += [f"- {line.strip()}"] if line.startswith("  ") else [line, ""]
    return "\n".join(parts).rstrip() + "\n"


def render_csv(board: Board) -> str:
    """One line per row (model): every measurement of every column with its interval and counts,
    each column's score, eligibility and run folder; full precision."""
    header = ["rank", "model", "name"]
    for c in board.columns:
        for m in c.measurements:
            base = f"{c.key}.{m}"
            header += [base, f"{base}.ci_low", f"{base}.ci_high", f"{base}.n_valid", f"{base}.n_total"]
        header += [f"{c.key}.rank", f"{c.key}.score", f"{c.key}.eligible", f"{c.key}.run"]
    lines = []
    for row in board.rows:
        line = [_rank(row), row.label, row.name]
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
                     "" if entry is None else entry.folder]
        lines.append(line)
    buffer = io.StringIO()
    writer = csv.writer(buffer, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(lines)
    return buffer.getvalue()


def write_leaderboard(board: Board, folder: Path) -> list[Path]:
    """``<folder>/leaderboard.md`` and ``leaderboard.csv`` (the sweep's and ``compare --out``'s: one writer)."""
    folder.mkdir(parents=True, exist_ok=True)
    md, table = folder / FILES.leaderboard_md, folder / FILES.leaderboard_csv
    md.write_text(render_markdown(board), encoding="utf-8")
    table.write_text(render_csv(board), encoding="utf-8")
    return [md, table]
