"""Static charts drawn by matplotlib (Agg, no pyplot state) as SVG, inlined as data URIs.

Static SVG needs no script at view time (nothing to fetch, nothing to fail in the console),
stays a few kB per chart and scales sharply. Text is kept as text (``svg.fonttype: none``)
and ids are salted by a constant, so the same data gives the same bytes.
"""

from __future__ import annotations

import base64
import io
import math
from dataclasses import dataclass
from typing import Sequence

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")
_RC = {"svg.fonttype": "none", "svg.hashsalt": "wfeval-report", "font.size": 9, "axes.spines.top": False,
       "axes.spines.right": False, "axes.grid": True, "grid.alpha": 0.3, "font.family": "sans-serif"}


def color(index: int) -> str:
    return PALETTE[index % len(PALETTE)]


@dataclass
class Point:
    """One model's value of one measurement (None: not measured / not valid)."""

    label: str
    value: float | None
    low: float | None = None
    high: float | None = None
    color: str = PALETTE[0]


@dataclass
class Curve:
    """One model's curve: y (and an optional band) against x."""

    label: str
    x: Sequence[float]
    y: Sequence[float]
    low: Sequence[float] | None = None
    high: Sequence[float] | None = None
    color: str = PALETTE[0]


def _figure(width: float, height: float, left: float = 0.6):
    """A figure with fixed margins in inches (a layout engine would double the drawing time)."""
    from matplotlib.figure import Figure

    figure = Figure(figsize=(width, height))
    figure.subplots_adjust(left=left / width, right=1 - 0.15 / width, top=1 - 0.3 / height,
                           bottom=0.45 / height)
    return figure


def _svg_uri(figure) -> str:
    import matplotlib

    buffer = io.BytesIO()
    with matplotlib.rc_context(_RC):
        figure.savefig(buffer, format="svg", metadata={"Date": None})
    return "data:image/svg+xml;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def _finite(x: float | None) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def interval_chart(title: str, points: Sequence[Point], higher_is_better: bool | None, unit: str = "") -> str:
    """Each model's value as a dot with its interval as a bar; models top to bottom."""
    import matplotlib

    with matplotlib.rc_context(_RC):
        longest = max((len(p.label) for p in points), default=4)
        figure = _figure(5.2, 0.95 + 0.3 * max(len(points), 1), left=min(2.2, 0.2 + 0.065 * longest))
        ax = figure.subplots()
        for row, point in enumerate(points):
            if not _finite(point.value):
                ax.text(0.5, row, "not measured", transform=ax.get_yaxis_transform(), va="center", ha="center",
                        color="#888")
                continue
            if _finite(point.low) and _finite(point.high):
                ax.hlines(row, point.low, point.high, color=point.color, linewidth=3, alpha=0.45)
            ax.plot([point.value], [row], "o", color=point.color, markersize=6)
        ax.set_yticks(range(len(points)), [p.label for p in points])
        ax.set_ylim(len(points) - 0.5, -0.5)
        ax.margins(x=0.08)
        direction = {True: " (higher is better)", False: " (lower is better)"}.get(higher_is_better, "")
        ax.set_title(f"{title}{direction}", loc="left", fontsize=9)
        if unit:
            ax.set_xlabel(unit)
        ax.grid(axis="y", visible=False)
        return _svg_uri(figure)


def curve_chart(title: str, curves: Sequence[Curve], xlabel: str, ylabel: str, *, log_y: bool = False) -> str:
    """Lines (one per model) with a shaded band when given."""
    import matplotlib

    with matplotlib.rc_context(_RC):
        figure = _figure(5.2, 2.6, left=0.75)
        ax = figure.subplots()
        for curve in curves:
            ax.plot(curve.x, curve.y, "-o", color=curve.color, markersize=3, linewidth=1.5, label=curve.label)
            if curve.low is not None and curve.high is not None:
                ax.fill_between(curve.x, curve.low, curve.high, color=curve.color, alpha=0.15, linewidth=0)
        if log_y:
            ax.set_yscale("log")
        ax.set_title(title, loc="left", fontsize=9)
        ax.set_xlabel(xlabel)
        ax.set_ylabel(ylabel)
        if len(curves) > 1:
            ax.legend(fontsize=8, frameon=False)
        return _svg_uri(figure)
