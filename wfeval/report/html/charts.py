"""Static charts as SVG, drawn directly and inlined as data URIs.

Two kinds of chart only: each model's value with its interval (a dot and a bar), and curves
against a step axis (lines with a shaded band). Static SVG needs no script at view time
(nothing to fetch, nothing to fail in the console), stays a few kB per chart and scales sharply;
drawn here, it costs microseconds per chart instead of a plotting library's import and layout
(about 0.8 s on every run's report). Same data, same bytes.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass
from html import escape
from typing import Iterable, Sequence

PALETTE = ("#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f", "#bcbd22",
           "#17becf")
WIDTH = 520
FONT = 'font-family="sans-serif" font-size="11"'
GRID = "#e4e4e4"
INK = "#333"


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


def _finite(x: float | None) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high] (steps of 1, 2 or 5 × 10^k)."""
    span = high - low
    raw = span / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    step = next(m * magnitude for m in (1, 2, 5, 10) if m * magnitude >= raw)
    first = math.ceil(low / step - 1e-9) * step
    ticks, value = [], first
    while value <= high + step * 1e-9:
        ticks.append(round(value, 12))
        value += step
    return ticks


def _domain(values: Iterable[float | None]) -> tuple[float, float]:
    finite = [float(v) for v in values if _finite(v)]
    if not finite:
        return 0.0, 1.0
    low, high = min(finite), max(finite)
    pad = (high - low) * 0.08 or max(abs(high) * 0.05, 0.5)
    return low - pad, high + pad


def _label(value: float) -> str:
    return f"{value:.4g}"


def _uri(body: list[str], height: int) -> str:
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" {FONT}>' + "".join(body) + "</svg>")
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def _x_axis(body: list[str], ticks: list[float], sx, top: float, bottom: float, label: str) -> None:
    for t in ticks:
        x = sx(t)
        body.append(f'<line x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{bottom:.1f}" stroke="{GRID}"/>')
        body.append(f'<text x="{x:.1f}" y="{bottom + 14:.1f}" text-anchor="middle" fill="{INK}">{_label(t)}</text>')
    body.append(f'<line x1="{sx(ticks[0]) if ticks else 0:.1f}" y1="{bottom:.1f}" x2="{WIDTH - 15}" '
                f'y2="{bottom:.1f}" stroke="{INK}"/>')
    if label:
        body.append(f'<text x="{(WIDTH + sx(ticks[0] if ticks else 0)) / 2:.1f}" y="{bottom + 30:.1f}" '
                    f'text-anchor="middle" fill="{INK}">{escape(label)}</text>')


def interval_chart(title: str, points: Sequence[Point], higher_is_better: bool | None, unit: str = "") -> str:
    """Each model's value as a dot with its interval as a bar; models top to bottom."""
    left = min(170, 20 + 7 * max((len(p.label) for p in points), default=4))
    row_h, top = 26, 32
    bottom = top + row_h * max(len(points), 1)
    height = int(bottom + (44 if unit else 28))
    low, high = _domain(v for p in points for v in (p.value, p.low, p.high))
    ticks = nice_ticks(low, high)
    low, high = min(low, ticks[0]), max(high, ticks[-1])

    def sx(v: float) -> float:
        return left + (WIDTH - 15 - left) * (v - low) / (high - low)

    direction = {True: " (higher is better)", False: " (lower is better)"}.get(higher_is_better, "")
    body = [f'<text x="8" y="16" font-size="12" fill="{INK}">{escape(title + direction)}</text>']
    _x_axis(body, ticks, sx, top, bottom, unit)
    for row, point in enumerate(points):
        y = top + row_h * (row + 0.5)
        body.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end" fill="{INK}">{escape(point.label)}</text>')
        if not _finite(point.value):
            body.append(f'<text x="{(left + WIDTH) / 2:.1f}" y="{y + 4:.1f}" text-anchor="middle" '
                        f'fill="#888">not measured</text>')
            continue
        if _finite(point.low) and _finite(point.high):
            body.append(f'<line x1="{sx(point.low):.1f}" y1="{y:.1f}" x2="{sx(point.high):.1f}" y2="{y:.1f}" '
                        f'stroke="{point.color}" stroke-width="4" stroke-opacity="0.45"/>')
        body.append(f'<circle cx="{sx(point.value):.1f}" cy="{y:.1f}" r="4.5" fill="{point.color}">'
                    f'<title>{escape(point.label)}: {_label(point.value)}</title></circle>')
    return _uri(body, height)


def curve_chart(title: str, curves: Sequence[Curve], xlabel: str, ylabel: str) -> str:
    """Lines (one per model) with a shaded band when given."""
    left, top, height = 62, 30, 260
    bottom = height - 46
    xs = [float(x) for c in curves for x in c.x]
    x_low, x_high = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if x_high == x_low:
        x_low, x_high = x_low - 0.5, x_high + 0.5
    y_low, y_high = _domain(v for c in curves for series in (c.y, c.low or (), c.high or ()) for v in series)
    y_ticks = nice_ticks(y_low, y_high, 4)
    y_low, y_high = min(y_low, y_ticks[0]), max(y_high, y_ticks[-1])

    def sx(v: float) -> float:
        return left + (WIDTH - 15 - left) * (v - x_low) / (x_high - x_low)

    def sy(v: float) -> float:
        return bottom - (bottom - top) * (v - y_low) / (y_high - y_low)

    body = [f'<text x="8" y="16" font-size="12" fill="{INK}">{escape(title)}</text>']
    for t in y_ticks:
        body.append(f'<line x1="{left}" y1="{sy(t):.1f}" x2="{WIDTH - 15}" y2="{sy(t):.1f}" stroke="{GRID}"/>')
        body.append(f'<text x="{left - 6}" y="{sy(t) + 4:.1f}" text-anchor="end" fill="{INK}">{_label(t)}</text>')
    _x_axis(body, nice_ticks(x_low, x_high, 6), sx, top, bottom, xlabel)
    body.append(f'<text transform="translate(14 {(top + bottom) / 2:.1f}) rotate(-90)" text-anchor="middle" '
                f'fill="{INK}">{escape(ylabel)}</text>')
    for curve in curves:
        pairs = [(float(x), float(y)) for x, y in zip(curve.x, curve.y) if _finite(x) and _finite(y)]
        if curve.low is not None and curve.high is not None:
            band = [(float(x), float(lo), float(hi)) for x, lo, hi in zip(curve.x, curve.low, curve.high)
                    if _finite(x) and _finite(lo) and _finite(hi)]
            if band:
                outline = [f"{sx(x):.1f},{sy(hi):.1f}" for x, _, hi in band]
                outline += [f"{sx(x):.1f},{sy(lo):.1f}" for x, lo, _ in reversed(band)]
                body.append(f'<polygon points="{" ".join(outline)}" fill="{curve.color}" fill-opacity="0.15"/>')
        if pairs:
            line = " ".join(f"{sx(x):.1f},{sy(y):.1f}" for x, y in pairs)
            body.append(f'<polyline points="{line}" fill="none" stroke="{curve.color}" stroke-width="1.6"/>')
            body += [f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="2.2" fill="{curve.color}"/>' for x, y in pairs]
    if len(curves) > 1:
        for i, curve in enumerate(curves):
            y = top + 6 + 15 * i
            body.append(f'<rect x="{WIDTH - 150}" y="{y - 8}" width="12" height="3" fill="{curve.color}"/>')
            body.append(f'<text x="{WIDTH - 133}" y="{y - 3}" fill="{INK}">{escape(curve.label)}</text>')
    return _uri(body, height)
