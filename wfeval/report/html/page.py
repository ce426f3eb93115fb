"""What the page shows, computed from loaded runs: the leaderboard, the comparisons, one section per
benchmark (its table, charts, samples, failures) and the sample viewer; the context.

The leaderboard is :mod:`wfeval.report.leaderboard`'s, the one ``compare`` prints: the same rows
in the same order with the same numbers. Each run takes its row's name and colour. A sweep over
several benchmarks gets a section per benchmark (a column of the leaderboard). Everything here
reads :class:`~wfeval.report.html.load.RunData`; per-run data comes from :func:`section_parts`
(streamed from the run files), charts are drawn by :mod:`.charts`, the samples' sections and the
viewer come from :mod:`.samples`, provenance from :mod:`.provenance`.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from wfeval.report.html import charts
from wfeval.report.html.load import RunData
from wfeval.report.html.provenance import provenance
from wfeval.report.html.samples import (
    MAX_IDS,
    MAX_SAMPLE_ROWS,
    failures,
    pictured,
    sample_table,
    strip_ids,
    strips,
    viewer,
    viewer_ids,
)
from wfeval.report.html.values import fmt, headline, higher_is_better
from wfeval.report.leaderboard import Board, Column, Row, leaderboard
from wfeval.report.numbers import EN_DASH, number, signed
from wfeval.report.units import unit_of

# -- the leaderboard ---------------------------------------------------------------------------

def _cell(board: Board, row: Row, column: Column, metric: str) -> dict[str, Any]:
    cell = board.cell(row, column, metric)
    if cell.value is None:
        return {"text": cell.text, "sort": "", "title": cell.missing or cell.text, "cls": "missing",
                "interval": "", "coverage": ""}
    agg = board.aggregate(row, column, metric) or {}
    ci, diag = agg.get("confidence_interval") or {}, agg.get("diagnostics") or {}
    coverage = diag.get("coverage", cell.n_valid / cell.n_total if cell.n_total else 0.0)
    breakdown = "; ".join(f"{n}× {reason}" for reason, n in (agg.get("skip_breakdown") or {}).items())
    title = (f"{ci.get('method', 'no')} interval at {ci.get('level', '')}; {cell.n_valid}/{cell.n_total} valid, "
             f"coverage {fmt(coverage, 3)}" + (f"; not scored: {breakdown}" if breakdown else ""))
    short = cell.n_total and cell.n_valid < cell.n_total
    return {"text": fmt(cell.value) + (" ≈" if cell.tie else ""), "sort": repr(cell.value), "title": title,
            "cls": "low-coverage" if short else "",
            "interval": f"[{fmt(cell.low)}, {fmt(cell.high)}]" if cell.low is not None else "",
            "coverage": f"{cell.n_valid}/{cell.n_total}" if short else ""}


def _eligibility(board: Board, row: Row, column: Column) -> dict[str, Any]:
    entry = row.entries.get(column.key)
    if entry is None:
        return {"state": "none", "text": "no run", "reasons": []}
    if entry.document is None:
        return {"state": "failed", "text": f"run {entry.status}", "reasons": [entry.error] if entry.error else []}
    text = board.eligible_text(row, column)
    return {"state": "yes" if text == "yes" else "no", "text": text, "reasons": board.reasons(row, column)}


def board_tables(board: Board) -> dict[str, Any]:
    """The headline table (models × benchmarks) and one detail table per benchmark, as cells."""
    headline_rows = []
    for row in board.rows:
        headline_rows.append({
            "rank": row.rank, "label": row.label, "name": row.name, "color": _color(board, row), "run": "",
            "cells": [_cell(board, row, c, c.primary) if c.primary else {"text": "-", "sort": "", "cls": "missing",
                                                                        "title": "", "interval": "", "coverage": ""}
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
                         "color": _color(board, row), "run": entry.folder,
                         "cells": [_cell(board, row, column, m) for m in column.measurements],
                         "score": board.score_text(row, column), "score_sort": _sort(board.score(row, column)),
                         "eligible": _eligibility(board, row, column)})
        details[column.key] = {"title": board.column_title(column), "rows": rows,
                               "headings": [{"key": column.measurement(m), "text": column.heading(m)}
                                            for m in column.measurements]}
    return {"sort": board.sort_label(), "columns": [{"key": c.key, "heading": c.heading(c.primary) if c.primary
                                                     else "-"} for c in board.columns],
            "rows": headline_rows, "details": details, "legend": board.legend(), "several": len(board.columns) > 1}


def _sort(value: float | None) -> str:
    return "" if value is None else repr(value)


def _color(board: Board, row: Row) -> str:
    return charts.color(board.rows.index(row))


# -- charts ------------------------------------------------------------------------------------

def _info(runs: list[RunData], measurement: str) -> dict[str, Any]:
    for run in runs:
        info = ((run.results or {}).get("metrics") or {}).get(measurement)
        if info is not None:
            return {**info, "short_unit": unit_of(run.results, measurement)}
    return {}


def metric_charts(runs: list[RunData], measurements: list[str]) -> list[dict[str, Any]]:
    out = []
    for m in measurements:
        info = _info(runs, m)
        points = []
        for run in runs:
            agg = ((run.results or {}).get("results") or {}).get(m)
            ci = (agg or {}).get("confidence_interval") or {}
            points.append(charts.Point(run.label, headline(agg) if agg else None, number(ci.get("low")),
                                       number(ci.get("high")), run.color))
        out.append({"measurement": m, "uri": charts.interval_chart(m, points, higher_is_better(runs, m),
                                                                   info.get("short_unit", ""), info.get("bounds"))})
    return out


def horizon_curves(runs: list[RunData]) -> list[dict[str, Any]]:
    """Mean per-frame curve of each metric that keeps one (``components``), per model, with a 95% band.

    Metrics that keep the same curve (action_following and agent_position_error both keep the
    agent's per-frame position error) share one chart. The sums are :mod:`.curves`'.
    """
    metrics: list[str] = []
    for run in runs:
        metrics += [m for m in run.metrics if m not in metrics]
    found: dict[tuple, dict[str, Any]] = {}
    for metric in metrics:
        curves, xlabel, component, cap = [], "frame", "", None
        for run in runs:
            horizon = run.horizons.get(metric)
            if horizon is None:
                continue
            if horizon.component is not None:
                xlabel, component = horizon.xlabel, horizon.component
            cap = horizon.cap if horizon.cap is not None else cap
            curve = horizon.curve()
            if curve is None:
                continue
            xs, mean, half = curve
            curves.append(charts.Curve(run.label, xs, mean, [m - h for m, h in zip(mean, half)],
                                       [m + h for m, h in zip(mean, half)], run.color,
                                       [horizon.capped.get(x, 0) for x in xs]))
        if curves:
            key = (component, tuple((c.label, tuple(c.x), tuple(c.y)) for c in curves))
            found.setdefault(key, {"metrics": [], "component": component, "xlabel": xlabel, "curves": curves,
                                   "cap": cap})
            found[key]["metrics"].append(metric)
    return list(found.values())


OWN_CURVES = ("per_frame", "per_step")  # curves of the metric's own per-frame value: its bounds hold


def horizon_charts(found: list[dict[str, Any]], runs: list[RunData], benchmark: str) -> list[dict[str, Any]]:
    out = []
    for f in found:
        info = _info(runs, f"{benchmark}.{f['metrics'][0]}")
        bounds = info.get("bounds") if f["component"] in OWN_CURVES else [0.0, None]
        unit = info.get("short_unit", "") if f["component"] in OWN_CURVES else "px"
        ylabel = f"{f['component']}" + (f" ({unit})" if unit else "")
        out.append({"metric": " ".join(f["metrics"]), "component": f["component"], "uri": charts.curve_chart(
            f"{', '.join(f['metrics'])} · {f['component']}", f["curves"], f["xlabel"], ylabel, bounds,
            f.get("cap"))})
    return out


def _quantile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between the closest ranks of sorted values."""
    pos = q * (len(ordered) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    low, high = float(ordered[lo]), float(ordered[hi])
    return low + (high - low) * (pos - lo)


def latency_data(runs: list[RunData]) -> dict[str, Any] | None:
    """Latency per step for step-wise runs (``steps.jsonl`` rows with ``step`` > 0); None for open loop.

    A step-wise protocol writes one ``phase: "step"`` row per model call (step 0: ``start``) beside
    the sample's ``phase: "generate"`` row (its whole generation): only the step rows count then
    (:class:`~.digest.Steps`).
    """
    per_run = []
    for run in runs:
        by_step, every = run.steps.by_step()
        if len(by_step) > 1:
            per_run.append((run, by_step, every))
    if not per_run:
        return None
    curves, table = [], []
    for run, by_step, every in per_run:
        xs = [step for step, _ in by_step]
        curves.append(charts.Curve(run.label, xs, [1000 * _quantile(v, 0.5) for _, v in by_step],
                                   [1000 * _quantile(v, 0.1) for _, v in by_step],
                                   [1000 * _quantile(v, 0.9) for _, v in by_step], run.color))
        median = _quantile(every, 0.5)
        table.append({"label": run.label, "steps": len(xs), "rows": len(every), "median": fmt(1000 * median),
                      "p90": fmt(1000 * _quantile(every, 0.9)), "rate": fmt(1 / median if median > 0 else None)})
    return {"curves": curves, "table": table}


def latency_chart(data: dict[str, Any] | None) -> dict[str, Any] | None:
    if data is None:
        return None
    uri = charts.curve_chart("latency per step (median over samples, 10–90% band)", data["curves"], "step",
                             "ms per step", [0.0, None])
    return {"uri": uri, "table": data["table"]}


# -- one benchmark's section -------------------------------------------------------------------

def section_parts(runs: list[RunData], measurements: list[str]) -> dict[str, Any]:
    """What a section shows of its runs' row files (the streamed data): horizon curves, latency,
    the strips of the measurements that pictures explain, failures and the per-sample tables."""
    return {"horizon": horizon_curves(runs), "latency": latency_data(runs), "strips": strips(runs, measurements),
            "failures": [failures(r) for r in runs], "tables": [sample_table(r) for r in runs]}


def section(board: Board, column: Column, details: dict[str, Any]) -> dict[str, Any]:
    runs = [row.entries[column.key].extra["run"] for row in board.column_rows(column)]
    measurements = [column.measurement(m) for m in column.measurements]
    shown = [m for m in measurements if pictured(runs, m)]
    later, _ = viewer_ids(runs, strip_ids(runs, shown))  # the viewer's samples: read with the strips' records
    for run in runs:
        run.want_records(later)
    parts = section_parts(runs, shown)
    picks = [item["sample_id"] for s in parts["strips"] for g in s["groups"] for item in g["picks"]]
    return {
        "key": column.key, "anchor": "bench-" + "".join(ch if ch.isalnum() else "-" for ch in column.key),
        "board": details[column.key], "runs": runs,
        "metric_charts": metric_charts(runs, measurements),
        "horizon": horizon_charts(parts["horizon"], runs, column.benchmark),
        "latency": latency_chart(parts["latency"]),
        "strips": parts["strips"], "unpictured": [m.split(".", 1)[-1] for m in measurements if m not in shown],
        "failures": parts["failures"], "samples": _sample_rows(runs, parts["tables"]),
        "viewer": viewer(runs, picks),
    }


def _sample_rows(runs: list[RunData], tables: list[dict[str, Any]]) -> dict[str, Any]:
    """One filterable table of the section: a row per sample and model, the model's values."""
    metrics: list[str] = []
    for table in tables:
        metrics += [m for m in table["metrics"] if m not in metrics]
    rows, more = [], []
    for run, table in zip(runs, tables):
        for r in table["rows"]:
            values = dict(zip(table["metrics"], r["cells"]))
            cells = [values.get(m, (EN_DASH, "")) for m in metrics]
            states = {r["status"] or "ok"} | {text for text, sort in cells if not sort and text in ("skip", "error")}
            state = "failed" if (r["status"] or "ok") not in ("ok", "completed") else (
                "error" if "error" in states else "skip" if "skip" in states else "ok")
            rows.append({"id": r["id"], "model": run.label, "color": run.color, "status": r["status"],
                         "state": state, "cells": cells})
        if table["more"]:
            more.append(f"{run.label}: {table['more']} more in metrics.jsonl")
    return {"metrics": metrics, "rows": rows, "more": more, "models": [r.label for r in runs]}


# -- comparisons -------------------------------------------------------------------------------

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
                refused.append({"label": row.label, "reason": str(exc), "color": _color(board, row)})
        adjust_family([c for _, c in done])
        headings = [column.measurement(m) for m in column.measurements]
        table = []
        for row, comparison in done:
            by_measurement = {d.measurement: d for d in comparison.differences}
            cells = []
            for m in headings:
                d = by_measurement.get(m)
                if d is None or d.reason:
                    cells.append({"text": EN_DASH, "interval": "", "cls": "ns", "title": d.reason if d else "not in both"})
                    continue
                verdict = d.verdict(alpha, row.label, base.label)
                cls = "better" if verdict == f"{row.label} better" else "worse" if verdict == f"{base.label} better" \
                    else "ns" if verdict == "not significant" else "differs"
                cells.append({"text": signed(d.estimate, missing=EN_DASH), "interval": f"[{fmt(d.low)}, {fmt(d.high)}]",
                              "cls": cls, "title": f"{verdict}; p = {fmt(d.p)}, Holm-adjusted {fmt(d.p_adjusted)}; "
                                                   f"n = {d.n} shared samples; {d.method}"})
            table.append({"label": row.label, "color": _color(board, row), "n": comparison.shared, "cells": cells,
                          "notes": comparison.notes})
        family = sum(1 for _, c in done for d in c.differences if d.p is not None)
        out.append({"key": column.key, "baseline": base.label, "rows": table, "refused": refused, "error": "",
                    "headings": [{"key": m, "text": m.split(".", 1)[-1]} for m in headings], "family": family,
                    "alpha": alpha})
    return out


# -- the context -------------------------------------------------------------------------------

def pictures(sections: list[dict[str, Any]]) -> list[tuple[str, str]]:
    """Each distinct moving picture once, as a CSS class (``pic-N``) the strips that show it name:
    the same sample is often the best (or worst) of several metrics, and its picture is not
    repeated in the page."""
    classes: dict[str, str] = {}
    for s in sections:
        for st in s["strips"]:
            for g in st["groups"]:
                for item in g["picks"]:
                    strip = item["strip"]
                    uri = strip.data_uri if strip is not None else None
                    item["pic"] = classes.setdefault(uri, f"pic-{len(classes)}") if uri else ""
    return [(name, uri) for uri, name in classes.items()]



def context(runs: list[RunData], title: str, baseline: str | None = None, alpha: float = 0.05) -> dict[str, Any]:
    from wfeval.report.runs import column_key

    entries = [run.entry() for run in runs]
    # a run that ended without results in a column no other run has (e.g. a config error before the
    # benchmark was built): listed under the leaderboard, not made a column of its own
    known = {column_key(e) for e in entries if e.document is not None}
    stray = [e for e in entries if e.document is None and known and column_key(e) not in known]
    board = leaderboard([e for e in entries if e not in stray])
    runs = [e.extra["run"] for e in entries if e not in stray]
    for i, row in enumerate(board.rows):  # each run is named and coloured as its row
        for entry in row.entries.values():
            run = entry.extra["run"]
            run.label, run.color = row.label, charts.color(i)
    tables = board_tables(board)
    benchmarks = sorted({r.benchmark_id for r in runs if r.benchmark_id})
    sections = [section(board, column, tables["details"]) for column in board.columns]
    return {
        "title": title,
        "runs": [e.extra["run"] for e in entries],
        "benchmarks": benchmarks,
        "board": tables,
        "comparisons": comparisons(board, baseline, alpha) if len(runs) > 1 else [],
        "alpha": alpha,
        "sections": sections,
        "stray": [{"folder": e.folder, "model": e.model_name, "status": e.status, "error": e.error or ""}
                  for e in stray],
        "pictures": pictures(sections),
        "provenance": [provenance(e.extra["run"]) for e in entries],
        "limits": {"sample_rows": MAX_SAMPLE_ROWS, "ids": MAX_IDS},
    }
