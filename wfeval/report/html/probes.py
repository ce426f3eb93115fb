"""The latent layout of a section (``task=probing``): the probe score against the horizon (observed,
then imagined k = 1, 2, 4, 8, 16 steps ahead: in numeric order) per model, and a table per model of
each probe measure with its chance, ceiling and the latents' effective rank, and the mean per state
variable. Everything comes from the aggregates (wfeval/metrics/probing.py's ``diagnostics``, read
through :mod:`wfeval.report.probes`, as the terminal table and ``results.md`` read them).
"""

from __future__ import annotations

from typing import Any

from wfeval.report.html import charts
from wfeval.report.html.load import RunData
from wfeval.report.html.values import aggregate_of, fmt
from wfeval.report.numbers import number
from wfeval.report.probes import OFF_RANGE, OFF_RANGE_NOTE, horizon_of, horizon_order, is_probe, off_range


LEVEL_COLOR = "#9a9a9a"


def probe_curve(runs: list[RunData], measurements: list[str]) -> dict[str, Any] | None:
    """One chart, a line per model: probe R² (95% interval as the band) against the steps imagined
    ahead, 0 being the observed frames; an off-range point (the predictor leaves the encoder's
    range) is left out and named under the chart. None without at least two horizons."""
    ordered = horizon_order(measurements)
    if len(ordered) < 2:
        return None
    curves, dropped = [], []
    for run in runs:
        xs, ys, lows, highs = [], [], [], []
        for m in ordered:
            agg = aggregate_of(run, m)
            value = number(agg.value) if agg is not None else None
            if agg is None or value is None:
                continue
            if off_range(agg.diagnostics):
                dropped.append(f"{run.label} at k = {horizon_of(m)}")
                continue
            xs.append(horizon_of(m))
            ys.append(value)
            lows.append(value if number(agg.ci_low) is None else number(agg.ci_low))
            highs.append(value if number(agg.ci_high) is None else number(agg.ci_high))
        if xs:
            curves.append(charts.Curve(run.label, xs, ys, lows, highs, run.color))
    if not curves:
        return None
    span = [0, max(x for c in curves for x in c.x)]  # chance and ceiling drawn across, in grey
    curves += [charts.Curve("ceiling (exact state)", span, [1.0, 1.0], color=LEVEL_COLOR),
               charts.Curve("chance (training mean)", span, [0.0, 0.0], color=LEVEL_COLOR)]
    uri = charts.curve_chart("probe R² against the horizon (0: observed frames)", curves,
                             "steps imagined ahead (k)", "probe R² (1 exact, 0 chance)", [None, 1.0])
    return {"uri": uri, "horizons": sorted({int(x) for c in curves[:-2] for x in c.x}),
            "dropped": f"{OFF_RANGE_NOTE}: {', '.join(dropped)}" if dropped else ""}


def probe_tables(runs: list[RunData], measurements: list[str]) -> list[dict[str, Any]]:
    """Per model: each probe measure (by horizon, then the others) with its value, chance, ceiling
    and effective rank, and a row per state variable with its mean under each measure."""
    out = []
    for run in runs:
        found = {m: a for m in measurements if (a := aggregate_of(run, m)) is not None and is_probe(a.diagnostics)}
        if not found:
            continue
        ordered = horizon_order(found) + [m for m in found if horizon_of(m) is None]
        rows = []
        for m in ordered:
            d = found[m].diagnostics
            rank = number(d.get("effective_rank"))
            rows.append({"measurement": m.split(".", 1)[-1],
                         "value": OFF_RANGE if off_range(d) else fmt(found[m].value),
                         "chance": fmt(number(d.get("chance"))), "ceiling": fmt(number(d.get("ceiling"))),
                         "rank": "" if rank is None else f"{rank:.3g} of {d.get('latent_dim', '?')}"})
        names = list(dict.fromkeys(v for m in ordered for v in found[m].diagnostics["variables"]))
        variables = [{"name": v, "cells": [fmt(number(found[m].diagnostics["variables"].get(v))) for m in ordered]}
                     for v in names]
        out.append({"label": run.label, "rows": rows, "columns": [m.split(".", 1)[-1] for m in ordered],
                    "variables": variables})
    return out


def probe_section(runs: list[RunData], measurements: list[str]) -> dict[str, Any] | None:
    """The section's probe part, or None for a run without probes."""
    tables = probe_tables(runs, measurements)
    if not tables:
        return None
    return {"curve": probe_curve(runs, measurements), "tables": tables}
