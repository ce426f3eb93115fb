"""The leaderboard as the page shows it: the headline table (models × benchmarks) and one detail
table per benchmark, as cells (value, interval, coverage, tooltip) and eligibility.

The board is :mod:`wfeval.report.leaderboard`'s, the one ``compare`` prints: the same rows in the
same order with the same numbers; each row keeps one colour across the page (:func:`row_color`).
"""

from __future__ import annotations

from typing import Any

from wfeval.report.html import charts
from wfeval.report.html.values import fmt
from wfeval.report.leaderboard import Board, Column, Row
from wfeval.report.probes import OFF_RANGE, levels_note, off_range
from wfeval.report.signals import flags
from wfeval.results.record import Aggregate


def row_color(board: Board, row: Row) -> str:
    """The colour of a leaderboard row (its model) wherever the page shows it."""
    return charts.color(board.rows.index(row))


def _cell(board: Board, row: Row, column: Column, metric: str) -> dict[str, Any]:
    cell = board.cell(row, column, metric)
    if cell.value is None:
        return {"text": cell.text, "sort": "", "title": cell.missing or cell.text, "cls": "missing",
                "interval": "", "coverage": "", "weak": ""}
    agg = board.aggregate(row, column, metric) or Aggregate()
    ci, diag = agg.confidence_interval or {}, agg.diagnostics or {}
    coverage = diag.get("coverage", cell.n_valid / cell.n_total if cell.n_total else 0.0)
    breakdown = "; ".join(f"{n}× {reason}" for reason, n in (agg.skip_breakdown or {}).items())
    title = (f"{ci.get('method', 'no')} interval at {ci.get('level', '')}; {cell.n_valid}/{cell.n_total} valid, "
             f"coverage {fmt(coverage, 3)}" + (f"; not scored: {breakdown}" if breakdown else ""))
    short = cell.n_total and cell.n_valid < cell.n_total
    weak = flags(agg)  # a number that cannot tell models apart: marked, its reason in the tooltip
    title += "".join(f"; {flag.label}: {flag.detail}" for flag in weak)
    if levels_note(diag):  # a probe: what it reads against (chance, ceiling, effective rank), off range flagged
        title = f"{levels_note(diag)}; {title}"
    text = OFF_RANGE if off_range(diag) else fmt(cell.value) + (" ≈" if cell.tie else "")
    return {"text": text, "sort": repr(cell.value), "title": title,
            "cls": "low-coverage" if short else "",
            "interval": f"[{fmt(cell.low)}, {fmt(cell.high)}]" if cell.low is not None else "",
            "coverage": f"{cell.n_valid}/{cell.n_total}" if short else "", "weak": "; ".join(map(str, weak))}


def _eligibility(board: Board, row: Row, column: Column) -> dict[str, Any]:
    entry = row.entries.get(column.key)
    if entry is None:
        return {"state": "none", "text": "no run", "reasons": []}
    if entry.document is None:
        return {"state": "failed", "text": f"run {entry.status}", "reasons": [entry.error] if entry.error else []}
    text = board.eligible_text(row, column)
    return {"state": "yes" if text == "yes" else "no", "text": text, "reasons": board.reasons(row, column)}


def _ladder(board: Board, row: Row, column: Column) -> dict[str, Any]:
    """The highest rung the row's run reaches: the rung, its evidence in the tooltip."""
    top = board.ladder(row, column)
    return {"text": top.rung or "-", "sort": "" if top.rung is None else top.rung[1:], "title": top.title()}


def _sort(value: float | None) -> str:
    return "" if value is None else repr(value)


def board_tables(board: Board) -> dict[str, Any]:
    """The headline table (models × benchmarks) and one detail table per benchmark, as cells."""
    headline_rows = []
    for row in board.rows:
        headline_rows.append({
            "rank": row.rank, "label": row.label, "name": row.name, "color": row_color(board, row), "run": "",
            "cells": [_cell(board, row, c, c.primary) if c.primary else {"text": "-", "sort": "", "cls": "missing",
                                                                        "title": "", "interval": "", "coverage": "",
                                                                        "weak": ""}
                      for c in board.columns],
            "scores": [{"text": board.score_text(row, c), "sort": _sort(board.score(row, c))} for c in board.columns],
            "eligible": [_eligibility(board, row, c) for c in board.columns],
        })
    details = {}
    for column in board.columns:
        rows = []
        for row in board.column_rows(column):
            entry = row.entries[column.key]
            rows.append({"rank": board.column_rank(row, column), "label": row.label, "name": row.name,
                         "color": row_color(board, row), "run": entry.folder,
                         "cells": [_cell(board, row, column, m) for m in column.measurements],
                         "score": board.score_text(row, column), "score_sort": _sort(board.score(row, column)),
                         "eligible": _eligibility(board, row, column), "ladder": _ladder(board, row, column)})
        details[column.key] = {"title": board.column_title(column), "rows": rows,
                               "headings": [{"key": column.measurement(m), "text": column.heading(m)}
                                            for m in column.measurements]}
    return {"sort": board.sort_label(), "columns": [{"key": c.key, "heading": c.heading(c.primary) if c.primary
                                                     else "-"} for c in board.columns],
            "rows": headline_rows, "details": details, "legend": board.legend(), "several": len(board.columns) > 1}
