"""The memory curves of a section: a metric's value against the gap, as its aggregate reports it.

``revisit_error`` and ``reversibility_error`` (``task=memory``) keep, in their aggregate's
``diagnostics["curve"]``, per gap bucket (a power of two: gaps in ``(b/2, b]``) the mean over
samples, its 95% interval and the count — the numbers ``results.json`` and the CLI give. The page
draws them as they are, per model, the x axis in log₂ of the bucket (2 … 256 steps are evenly
spaced), so that a model that forgets across long gaps rises at the right.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

from wfeval.report.html import charts
from wfeval.report.html.load import RunData
from wfeval.report.html.values import aggregate_of
from wfeval.results.record import Aggregate
from wfeval.report.numbers import number


def _curve(agg: Aggregate | None) -> tuple[list[int], list[float], list[float], list[float]] | None:
    """(buckets, means, lows, highs) of an aggregate's curve over the gap; None without one."""
    diagnostics = (agg.diagnostics if agg is not None else None) or {}
    curve = diagnostics.get("curve")
    if not isinstance(curve, Mapping) or not curve:
        return None
    points = []
    for bucket, point in curve.items():
        mean = number((point or {}).get("mean"))
        if mean is None or not str(bucket).isdigit() or int(bucket) < 1:
            continue
        interval = point.get("interval") or {}
        low, high = number(interval.get("low")), number(interval.get("high"))
        points.append((int(bucket), mean, mean if low is None else low, mean if high is None else high))
    points.sort()
    if not points:
        return None
    return [p[0] for p in points], [p[1] for p in points], [p[2] for p in points], [p[3] for p in points]


def gap_charts(runs: list[RunData], measurements: list[str]) -> list[dict[str, Any]]:
    """One chart per measurement whose aggregate keeps a curve over the gap, a line per model."""
    out = []
    for m in measurements:
        curves, over, unit = [], "gap", ""
        for run in runs:
            agg = aggregate_of(run, m)
            found = _curve(agg)
            if agg is None or found is None:
                continue
            over = str((agg.diagnostics or {}).get("curve_over") or over)
            unit = str((run.results.info(m).unit if run.results is not None else None) or unit)
            buckets, mean, low, high = found
            curves.append(charts.Curve(run.label, [math.log2(b) for b in buckets], mean, low, high, run.color))
        if curves:
            xlabel = f"{over}: log₂ of the bucket's frames (1 = 2, 4 = 16, 8 = 256)"
            out.append({"metric": m.split(".", 1)[-1], "buckets": sorted({int(round(2 ** x)) for c in curves for x in c.x}),
                        "uri": charts.curve_chart(f"{m.split('.', 1)[-1]} against the {over}", curves, xlabel,
                                                  m.split(".", 1)[-1] + (f" ({unit})" if unit else ""), [0.0, None])})
    return out
