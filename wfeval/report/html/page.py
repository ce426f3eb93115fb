"""What the page shows, computed from loaded runs: the leaderboard, the comparisons, one section per
benchmark (its table, charts, samples, failures) and the sample viewer; the context.

The leaderboard is :mod:`wfeval.report.leaderboard`'s, the one ``compare`` prints: the same rows
in the same order with the same numbers. Each run takes its row's name and colour. A sweep over
several benchmarks gets a section per benchmark (a column of the leaderboard). Everything here
reads :class:`~wfeval.report.html.load.RunData`; per-run data comes from :func:`section_parts`
(streamed from the run files), charts are drawn by :mod:`.charts`, the leaderboard's tables come
from :mod:`.board`, the paired comparisons from :mod:`.comparisons`, the samples' sections and the
viewer from :mod:`.samples`, provenance from :mod:`.provenance`. A new part of the page is a
module of its own and one key of :func:`context`.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from wfeval.report.html import charts
from wfeval.report.html.board import board_tables
from wfeval.report.html.comparisons import comparisons
from wfeval.report.html.curves import OWN_CURVES
from wfeval.report.html.gaps import gap_charts
from wfeval.report.html.load import RunData
from wfeval.report.html.probes import probe_section
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
from wfeval.report.html.values import aggregate_of, fmt, headline, higher_is_better, info_of
from wfeval.report.leaderboard import Board, Column, leaderboard
from wfeval.report.numbers import EN_DASH, number
from wfeval.report.units import short_unit

# -- charts ------------------------------------------------------------------------------------

def _shown(runs: list[RunData], measurement: str) -> tuple[str, list[float | None] | None]:
    """(short unit, bounds) of a measurement as the first run that records it declares them."""
    info = info_of(runs, measurement)
    return (short_unit(info.unit), info.bounds) if info is not None else ("", None)


def metric_charts(runs: list[RunData], measurements: list[str]) -> list[dict[str, Any]]:
    out = []
    for m in measurements:
        unit, bounds = _shown(runs, m)
        points = []
        for run in runs:
            agg = aggregate_of(run, m)
            points.append(charts.Point(run.label, headline(agg), number(agg.ci_low if agg else None),
                                       number(agg.ci_high if agg else None), run.color))
        out.append({"measurement": m, "uri": charts.interval_chart(m, points, higher_is_better(runs, m),
                                                                   unit, bounds)})
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


def horizon_charts(found: list[dict[str, Any]], runs: list[RunData], benchmark: str) -> list[dict[str, Any]]:
    out = []
    for f in found:
        own_unit, own_bounds = _shown(runs, f"{benchmark}.{f['metrics'][0]}")
        bounds = own_bounds if f["component"] in OWN_CURVES else [0.0, None]
        unit = own_unit if f["component"] in OWN_CURVES else "px"
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
        "gaps": gap_charts(runs, measurements),
        "probes": probe_section(runs, measurements),  # the latent layout (task=probing)
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
    arena = _arena(board, [e for e in entries if e not in stray])
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
        "usefulness": _usefulness(runs),
        "arena": arena,
        "limits": {"sample_rows": MAX_SAMPLE_ROWS, "ids": MAX_IDS},
    }


def _usefulness(runs: list[RunData]) -> dict[str, Any] | None:
    """Which measure predicts usefulness across the runs' models (:mod:`wfeval.report.usefulness`)."""
    from wfeval.report.usefulness import section

    scored = [run for run in runs if run.results]
    return section([run.results for run in scored], [run.path for run in scored])


def _arena(board: Any, entries: list) -> dict[str, Any] | None:
    """People's votes beside the runs (:mod:`wfeval.report.votes`): a leaderboard column and a section."""
    from wfeval.report.votes import on_board, section

    summary = on_board(board, entries)
    for entry in entries if summary else ():  # the charts read the runs' results: the same copy
        entry.extra["run"].results = entry.document
    return section(summary)
