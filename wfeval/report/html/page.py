"""What the page shows, computed from loaded runs: the leaderboard and the charts; the context.

Everything here reads :class:`~wfeval.report.html.load.RunData` (what the report keeps of a run's
files); charts are drawn
by :mod:`.charts`, the samples' sections come from :mod:`.samples`, provenance from
:mod:`.provenance`.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

from wfeval.report.html import charts
from wfeval.report.html.load import RunData
from wfeval.report.html.provenance import provenance
from wfeval.report.html.samples import MAX_IDS, MAX_SAMPLE_ROWS, failures, sample_table, strips
from wfeval.report.html.values import fmt, headline, higher_is_better, measurements_of, number


def primary_of(runs: list[RunData], measurements: list[str]) -> str | None:
    for run in runs:
        primary = ((run.results or {}).get("scorecard") or {}).get("primary")
        if primary:
            key = f"{run.benchmark_id}.{primary}"
            if key in measurements:
                return key
    return measurements[0] if measurements else None


def _sort_key(value: float | None, higher: bool | None) -> tuple[int, float]:
    if value is None:
        return (1, 0.0)
    return (0, value if higher is False else -value)


def leaderboard(runs: list[RunData], measurements: list[str]) -> dict[str, Any]:
    primary = primary_of(runs, measurements)
    higher = higher_is_better(runs, primary) if primary else None

    def primary_value(run: RunData) -> float | None:
        agg = ((run.results or {}).get("results") or {}).get(primary or "")
        return headline(agg) if agg else None

    order = sorted(runs, key=lambda r: _sort_key(primary_value(r), higher))
    rows = []
    for rank, run in enumerate(order, 1):
        doc = run.results or {}
        cells = []
        for m in measurements:
            agg = (doc.get("results") or {}).get(m)
            if agg is None:
                cells.append({"text": "missing", "sort": "", "title": "not measured in this run", "cls": "missing",
                              "interval": "", "coverage": ""})
                continue
            value, ci = headline(agg), agg.get("confidence_interval") or {}
            diag = agg.get("diagnostics") or {}
            n_valid, n_total = agg.get("n_valid", 0), agg.get("n_total", 0)
            coverage = diag.get("coverage", n_valid / n_total if n_total else 0.0)
            interval = (f"[{fmt(ci.get('low'))}, {fmt(ci.get('high'))}]"
                        if number(ci.get("low")) is not None else "")
            breakdown = "; ".join(f"{n}× {reason}" for reason, n in (agg.get("skip_breakdown") or {}).items())
            title = (f"{ci.get('method', 'no')} interval at {ci.get('level', '')}; coverage {fmt(coverage, 3)}"
                     + (f"; not scored: {breakdown}" if breakdown else "")
                     + (f"; {diag.get('reason')}" if not agg.get("valid") and diag.get("reason") else ""))
            cells.append({
                "text": fmt(value) if value is not None else "n/a", "interval": interval,
                "coverage": f"{n_valid}/{n_total}", "sort": "" if value is None else repr(value), "title": title,
                "cls": "low-coverage" if n_total and n_valid < n_total else "",
            })
        evidence = doc.get("evidence") or {}
        score = (doc.get("scorecard") or {}).get("score")
        rows.append({
            "rank": rank, "label": run.label, "run_id": run.run_id, "status": run.status, "cells": cells,
            "score": fmt(score), "score_sort": "" if number(score) is None else repr(score),
            "eligible": evidence.get("eligible"), "reasons": list(evidence.get("reasons") or []),
            "error": run.manifest.get("error"),
        })
    single = len({m.split(".", 1)[0] for m in measurements}) == 1
    columns = [{"key": m, "short": m.split(".", 1)[-1] if single else m} for m in measurements]
    return {"primary": primary, "columns": columns, "rows": rows}


def metric_charts(runs: list[RunData], measurements: list[str]) -> list[dict[str, Any]]:
    out = []
    for m in measurements:
        points = []
        for i, run in enumerate(runs):
            agg = ((run.results or {}).get("results") or {}).get(m)
            ci = (agg or {}).get("confidence_interval") or {}
            points.append(charts.Point(run.label, headline(agg) if agg else None, number(ci.get("low")),
                                       number(ci.get("high")), charts.color(i)))
        out.append({"measurement": m, "uri": charts.interval_chart(m, points, higher_is_better(runs, m))})
    return out


def horizon_charts(runs: list[RunData]) -> list[dict[str, Any]]:
    """Mean per-frame curve of each metric that keeps one (``components``), per model, with a 95% band.

    Metrics that keep the same curve (action_following and agent_position_error both keep the
    agent's per-frame position error) share one chart. The sums are :mod:`.curves`'.
    """
    metrics: list[str] = []
    for run in runs:
        metrics += [m for m in run.metrics if m not in metrics]
    found: dict[tuple, dict[str, Any]] = {}
    for metric in metrics:
        curves, xlabel, component = [], "frame", ""
        for i, run in enumerate(runs):
            horizon = run.horizons.get(metric)
            if horizon is None:
                continue
            if horizon.component is not None:
                xlabel, component = horizon.xlabel, horizon.component
            curve = horizon.curve()
            if curve is None:
                continue
            xs, mean, half = curve
            curves.append(charts.Curve(run.label, xs, mean, [m - h for m, h in zip(mean, half)],
                                       [m + h for m, h in zip(mean, half)], charts.color(i)))
        if curves:
            key = (component, tuple((c.label, tuple(c.x), tuple(c.y)) for c in curves))
            found.setdefault(key, {"metrics": [], "component": component, "xlabel": xlabel, "curves": curves})
            found[key]["metrics"].append(metric)
    return [{"metric": " ".join(f["metrics"]), "component": f["component"], "uri": charts.curve_chart(
        f"{', '.join(f['metrics'])} · {f['component']}", f["curves"], f["xlabel"], f["component"])}
        for f in found.values()]


def _quantile(ordered: Sequence[float], q: float) -> float:
    """Linear interpolation between the closest ranks of sorted values."""
    pos = q * (len(ordered) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    low, high = float(ordered[lo]), float(ordered[hi])
    return low + (high - low) * (pos - lo)


def latency_chart(runs: list[RunData]) -> dict[str, Any] | None:
    """Latency per step for step-wise runs (``steps.jsonl`` rows with ``step`` > 0); None for open loop.

    A step-wise protocol writes one ``phase: "step"`` row per model call (step 0: ``start``) beside
    the sample's ``phase: "generate"`` row (its whole generation): only the step rows count then
    (:class:`~.digest.Steps`).
    """
    per_run = []
    for i, run in enumerate(runs):
        by_step, every = run.steps.by_step()
        if len(by_step) > 1:
            per_run.append((i, run, by_step, every))
    if not per_run:
        return None
    curves, table = [], []
    for i, run, by_step, every in per_run:
        xs = [step for step, _ in by_step]
        curves.append(charts.Curve(run.label, xs, [_quantile(v, 0.5) for _, v in by_step],
                                   [_quantile(v, 0.1) for _, v in by_step], [_quantile(v, 0.9) for _, v in by_step],
                                   charts.color(i)))
        median = _quantile(every, 0.5)
        table.append({"label": run.label, "steps": len(xs), "rows": len(every), "median": fmt(median),
                      "p90": fmt(_quantile(every, 0.9)), "rate": fmt(1 / median if median > 0 else None)})
    uri = charts.curve_chart("latency per step (median over samples, 10–90% band)", curves, "step", "seconds")
    return {"uri": uri, "table": table}


def context(runs: list[RunData], title: str) -> dict[str, Any]:
    measurements = measurements_of(runs)
    return {
        "title": title,
        "runs": runs,
        "benchmarks": sorted({r.benchmark_id for r in runs if r.benchmark_id}),
        "leaderboard": leaderboard(runs, measurements),
        "metric_charts": metric_charts(runs, measurements),
        "horizon": horizon_charts(runs),
        "latency": latency_chart(runs),
        "usefulness": _usefulness(runs),
        "strips": strips(runs, measurements),
        "failures": [failures(r) for r in runs],
        "tables": [sample_table(r) for r in runs],
        "provenance": [provenance(r) for r in runs],
        "limits": {"sample_rows": MAX_SAMPLE_ROWS, "ids": MAX_IDS},
    }


def _usefulness(runs: list[RunData]) -> dict[str, Any] | None:
    """Which measure predicts usefulness across the runs' models (:mod:`wfeval.report.usefulness`)."""
    from wfeval.report.usefulness import section

    return section([{**(run.results or {}), "_run_dir": str(run.path)} for run in runs if run.results])
