"""The leaderboard's model: :class:`Board` of :class:`Row` (models) × :class:`Column` (benchmarks),
each :class:`Cell` a measurement's headline with its interval, counts and tie mark; the ranking
and what the tables say (titles, headers, cells, legend, why rows are not eligible). Built by
:func:`wfeval.report.leaderboard.build.leaderboard`, rendered by :mod:`.render` and the HTML
report (:mod:`wfeval.report.html.board`) from the same cells.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Sequence

from wfeval.report.ladder import Reached, reached
from wfeval.report.numbers import HYPHEN, fmt, number
from wfeval.report.runs import Entry
from wfeval.report.signals import label as weak_signals
from wfeval.results.record import Aggregate
from wfeval.results.evidence import grouped_reasons

TIE = "≈"
SCORE = "score"


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

    def aggregate(self, row: Row, column: Column, metric: str) -> Aggregate | None:
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
        value = number(agg.value)
        n_valid, n_total = int(agg.n_valid or 0), int(agg.n_total or 0)
        if value is None:
            return Cell(None, None, None, n_valid, n_total, "n/a", missing="n/a")
        low, high = number(agg.ci_low), number(agg.ci_high)
        text = fmt(value)
        if low is not None and high is not None:
            text += f" [{fmt(low)}, {fmt(high)}]"
        tie = self._tie(column, metric, value, low, high)
        if tie:
            text += f" {TIE}"
        if n_total and n_valid < n_total:
            text += f" ({n_valid}/{n_total})"
        weak = weak_signals(agg)
        if weak:
            text += f" {weak}"
        return Cell(value, low, high, n_valid, n_total, text, tie)

    def _best(self, column: Column, metric: str) -> tuple[float, float | None, float | None] | None:
        higher = column.directions.get(metric)
        if higher is None:
            return None
        best = None
        for row in self.rows:
            agg = self.aggregate(row, column, metric)
            value = number(agg.value) if agg is not None else None
            if value is None:
                continue
            if best is None or (value > best[0] if higher else value < best[0]):
                best = (value, number(agg.ci_low), number(agg.ci_high))  # type: ignore[union-attr]
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
        return number(entry.document.scorecard.score) if entry and entry.document is not None else None

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
        if entry.document.evidence.eligible:
            return "yes"
        n = len(self.reasons(row, column))
        return f"no ({n} reason{'' if n == 1 else 's'})"

    def ladder(self, row: Row, column: Column) -> Reached:
        """The highest decision-ladder rung the row's run in ``column`` reaches, with its evidence."""
        entry = row.entries.get(column.key)
        return reached(entry.document) if entry is not None and entry.document is not None else Reached(None)

    def reasons(self, row: Row, column: Column) -> list[str]:
        entry = row.entries.get(column.key)
        if entry is None or entry.document is None:
            return []
        return grouped_reasons(entry.document.evidence, entry.document.benchmark.n_samples)

    # -- ranking ---------------------------------------------------------------------------------
    def sort_value(self, row: Row, column: Column, metric: str) -> float | None:
        if metric == SCORE:
            return self.score(row, column)
        agg = self.aggregate(row, column, metric)
        return number(agg.value) if agg is not None else None

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
        lines.append("ladder = the highest decision-ladder rung (L0-L7) a valid measurement of the run is evidence "
                     "for, with those measurements (docs/decision-ladder.md)")
        if any(weak_signals(self.aggregate(r, c, m)) for c in self.columns for m in c.measurements for r in self.rows):
            lines.append("⚠ = a weak signal: IDM too weak (its ceiling does not clear chance: it cannot tell models "
                         "apart), at chance (the interval contains chance), prior only (a rating no vote bounds)")
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
            body.append([rank_text(row), row.label, *cells, self._eligible_summary(row)])
        return header, body

    def _eligible_summary(self, row: Row) -> str:
        present = [c for c in self.columns if c.key in row.entries]
        no = [c.key for c in present if self.eligible_text(row, c) != "yes"]
        if not no:
            return "yes"
        return "no" if len(present) == 1 else f"no: {', '.join(no)}"

    def detail_table(self, column: Column) -> tuple[list[str], list[list[str]]]:
        """Every measurement of one column, its score and eligibility, the run folder."""
        header = ["rank", "model", "score", "eligible", "ladder", *[column.heading(m) for m in column.measurements],
                  "run"]
        body = []
        for row in self.column_rows(column):
            body.append([self.column_rank(row, column), row.label, self.score_text(row, column),
                         self.eligible_text(row, column), self.ladder(row, column).short(f"{column.benchmark}."),
                         *[self.cell(row, column, m).text for m in column.measurements],
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


def rank_text(row: Row) -> str:
    """The row's place on the board (``-`` when it has no value to rank by)."""
    return str(row.rank) if row.rank is not None else HYPHEN
