"""The paired comparisons as the page shows them: per benchmark with two or more models, every
model against a baseline on the samples both scored (:mod:`wfeval.report.paired`), one Holm
family per benchmark; a cell per measurement coloured better / worse / not significant, with p,
the adjusted p, n and the method in its tooltip."""

from __future__ import annotations

from typing import Any

from wfeval.report.html.board import row_color
from wfeval.report.html.values import fmt
from wfeval.report.ladder import differ_only_below
from wfeval.report.leaderboard import Board
from wfeval.report.numbers import EN_DASH, signed


def comparisons(board: Board, baseline: str | None, alpha: float = 0.05) -> list[dict[str, Any]]:
    """Per benchmark with two or more models: every model against the baseline (``baseline``: a
    row's name; default: the benchmark's top-ranked model), paired on the shared samples, one Holm
    family per benchmark."""
    from wfeval.report.paired import NotComparable, adjust_family, compare_runs

    out = []
    for column in board.columns:
        rows = [r for r in board.column_rows(column) if r.entries[column.key].document is not None]
        if len(rows) < 2:
            continue
        chosen = [r for r in rows if baseline in (r.label, r.name, r.key.get("model"))] if baseline else rows[:1]
        if not chosen:
            out.append({"key": column.key, "baseline": baseline, "error": f"no model named {baseline!r} here",
                        "rows": [], "headings": [], "refused": [], "family": 0})
            continue
        base = chosen[0]
        done, refused = [], []
        for row in rows:
            if row is base:
                continue
            try:
                done.append((row, compare_runs(row.entries[column.key], base.entries[column.key], label_a=row.label,
                                               label_b=base.label, adjust=False)))
            except NotComparable as exc:
                refused.append({"label": row.label, "reason": str(exc), "color": row_color(board, row)})
        adjust_family([c for _, c in done])
        headings = [column.measurement(m) for m in column.measurements]
        table = []
        for row, comparison in done:
            by_measurement = {d.measurement: d for d in comparison.differences}
            cells = []
            for m in headings:
                d = by_measurement.get(m)
                if d is None or d.reason:
                    cells.append({"text": EN_DASH, "interval": "", "cls": "ns",
                                  "title": d.reason if d else "not in both"})
                    continue
                verdict = d.verdict(alpha, row.label, base.label)
                cls = "better" if verdict == f"{row.label} better" else "worse" if verdict == f"{base.label} better" \
                    else "ns" if verdict == "not significant" else "differs"
                cells.append({"text": signed(d.estimate, missing=EN_DASH), "interval": f"[{fmt(d.low)}, {fmt(d.high)}]",
                              "cls": cls, "title": f"{verdict}; p = {fmt(d.p)}, Holm-adjusted {fmt(d.p_adjusted)}; "
                                                   f"n = {d.n} shared samples; {d.method}"})
            table.append({"label": row.label, "color": row_color(board, row), "n": comparison.shared, "cells": cells,
                          "notes": comparison.notes, "ladder": differ_only_below(comparison, alpha) or ""})
        family = sum(1 for _, c in done for d in c.differences if d.p is not None)
        out.append({"key": column.key, "baseline": base.label, "rows": table, "refused": refused, "error": "",
                    "headings": [{"key": m, "text": m.split(".", 1)[-1]} for m in headings], "family": family,
                    "alpha": alpha})
    return out
