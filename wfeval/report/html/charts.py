"""Static charts as SVG, drawn directly and inlined as data URIs.

Two kinds of chart only: each model's value with its interval (a dot and a bar), and curves
against a step axis (lines with a shaded band). Static SVG needs no script at view time
(nothing to fetch, nothing to fail in the console), stays a few kB per chart and scales sharply;
drawn here, it costs microseconds per chart instead of a plotting library's import and layout
(about 0.8 s on every run's report). Same data, same bytes.

Axes stay inside a metric's declared range (``bounds``: SSIM never past 1). A model whose value
sits at a bound far from every other model's (PSNR's 100 dB cap for identical frames) would
squash the others into a sliver; it is drawn as a marker on the edge, named with its value, and
the axis is scaled to the other models (:func:`off_scale`). Legends sit below the plot, never
over a curve.
"""

from __future__ import annotations

import base64
import math
from dataclasses import dataclass
from typing import Iterable, Sequence

from wfeval.report.escape import html_text as escape
from wfeval.report.numbers import significant

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
    capped: Sequence[int] | None = None  # per x: how many samples' values were at the metric's cap


def _finite(x: float | None) -> bool:
    return x is not None and isinstance(x, (int, float)) and math.isfinite(x)


def nice_ticks(low: float, high: float, count: int = 5) -> list[float]:
    """Round tick values covering [low, high] (steps of 1, 2 or 5 × 10^k)."""
    span = high - low
    raw = span / max(count, 1)
    magnitude = 10 ** math.floor(math.log10(raw))
    steps = [m * magnitude for m in (0.1, 0.2, 0.5, 1, 2, 5, 10)]
    index = next(i for i, step in enumerate(steps) if step >= raw)
    while True:  # a finer step when a coarse one leaves fewer than 3 ticks in the range
        step = steps[index]
        first = math.ceil(low / step - 1e-9) * step
        ticks, value = [], first
        while value <= high + step * 1e-9:
            ticks.append(round(value, 12))
            value += step
        if len(ticks) >= 3 or index == 0:
            return ticks
        index -= 1


def _domain(values: Iterable[float | None], bounds: Sequence[float | None] | None = None) -> tuple[float, float]:
    """The padded range of the values, never past ``bounds`` (the metric's declared range)."""
    finite = [float(v) for v in values if _finite(v)]
    if not finite:
        low, high = 0.0, 1.0
    else:
        low, high = min(finite), max(finite)
        pad = (high - low) * 0.08 or max(abs(high) * 0.05, 0.5)
        low, high = low - pad, high + pad
    lo, hi = (bounds or (None, None))[:2] if bounds else (None, None)
    if _finite(lo):
        low = max(low, float(lo))
    if _finite(hi):
        high = min(high, float(hi))
    if high <= low:  # every value on the bound: a range that ends there
        span = max(abs(high) * 0.05, 0.5)
        low, high = (high - span, high) if _finite(hi) and high == float(hi) else (low, low + span)
    return low, high


SQUASH = 0.25  # the others would span less than this share of the axis: the bound value goes off scale


def off_scale(levels: Sequence[float | None], spans: Sequence[Sequence[float | None]],
              bounds: Sequence[float | None] | None) -> set[int]:
    """Indices of the items whose one value (``levels[i]``: a dot, a flat curve) sits exactly on a
    bound (a cap) while every other item's values (``spans``: value, interval, curve, band) span
    less than ``SQUASH`` of the range they would need together: drawn on the edge, not on the axis."""
    if not bounds:
        return set()
    for bound in bounds[:2]:
        if not _finite(bound):
            continue
        at = {i for i, v in enumerate(levels) if _finite(v) and float(v) == float(bound)}  # type: ignore[arg-type]
        rest = [float(v) for i, span in enumerate(spans) if i not in at for v in span if _finite(v)]
        if not at or not rest:
            continue
        span_rest = max(rest) - min(rest)
        span_all = max(max(rest), float(bound)) - min(min(rest), float(bound))  # type: ignore[arg-type]
        if span_all > 0 and span_rest < SQUASH * span_all:
            return at
    return set()


def _label(value: float) -> str:
    return significant(value)


def _uri(body: list[str], height: int) -> str:
    svg = (f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
           f'viewBox="0 0 {WIDTH} {height}" {FONT}>' + "".join(body) + "</svg>")
    return "data:image/svg+xml;base64," + base64.b64encode(svg.encode("utf-8")).decode("ascii")


def _x_axis(body: list[str], ticks: list[float], sx, top: float, bottom: float, label: str,
            right: float = WIDTH - 15) -> None:
    for t in ticks:
        x = sx(t)
        body.append(f'<line x1="{x:.1f}" y1="{top:.1f}" x2="{x:.1f}" y2="{bottom:.1f}" stroke="{GRID}"/>')
        body.append(f'<text x="{x:.1f}" y="{bottom + 14:.1f}" text-anchor="middle" fill="{INK}">{_label(t)}</text>')
    body.append(f'<line x1="{sx(ticks[0]) if ticks else 0:.1f}" y1="{bottom:.1f}" x2="{right:.1f}" '
                f'y2="{bottom:.1f}" stroke="{INK}"/>')
    if label:
        body.append(f'<text x="{(right + sx(ticks[0] if ticks else 0)) / 2:.1f}" y="{bottom + 30:.1f}" '
                    f'text-anchor="middle" fill="{INK}">{escape(label)}</text>')


def interval_chart(title: str, points: Sequence[Point], higher_is_better: bool | None, unit: str = "",
                   bounds: Sequence[float | None] | None = None) -> str:
    """Each model's value as a dot with its interval as a bar; models top to bottom. The axis stays
    in ``bounds``; a value on a bound far from the others is a marker on the edge (:func:`off_scale`)."""
    left = min(170, 20 + 7 * max((len(p.label) for p in points), default=4))
    row_h, top = 26, 32
    bottom = top + row_h * max(len(points), 1)
    height = int(bottom + (44 if unit else 28))
    edge = off_scale([p.value for p in points], [(p.value, p.low, p.high) for p in points], bounds)
    shown = [p for i, p in enumerate(points) if i not in edge]
    low, high = _domain((v for p in shown for v in (p.value, p.low, p.high)), bounds)
    ticks = [t for t in nice_ticks(low, high) if low - 1e-12 <= t <= high + 1e-12] or [low, high]
    low, high = min(low, ticks[0]), max(high, ticks[-1])
    right = WIDTH - 15 - (70 if edge else 0)  # room for the edge markers' labels

    def sx(v: float) -> float:
        return left + (right - left) * (min(max(v, low), high) - low) / (high - low)

    direction = {True: " (higher is better)", False: " (lower is better)"}.get(higher_is_better, "")
    body = [f'<text x="8" y="16" font-size="12" fill="{INK}">{escape(title + direction)}</text>']
    _x_axis(body, ticks, sx, top, bottom, unit, right)
    for row, point in enumerate(points):
        y = top + row_h * (row + 0.5)
        body.append(f'<text x="{left - 8}" y="{y + 4:.1f}" text-anchor="end" fill="{INK}">{escape(point.label)}</text>')
        if not _finite(point.value):
            body.append(f'<text x="{(left + right) / 2:.1f}" y="{y + 4:.1f}" text-anchor="middle" '
                        f'fill="#888">not measured</text>')
            continue
        if row in edge:
            x = right if point.value >= high else left
            body.append(_edge_marker(x, y, point.color, right_side=point.value >= high))
            body.append(f'<text x="{x + (8 if point.value >= high else -8):.1f}" y="{y + 4:.1f}" '
                        f'text-anchor="{"start" if point.value >= high else "end"}" fill="{INK}">'
                        f'{_label(point.value)} (bound)<title>{escape(point.label)}: {_label(point.value)}, the '
                        f'metric\'s bound, off this scale</title></text>')
            continue
        if _finite(point.low) and _finite(point.high):
            body.append(f'<line x1="{sx(point.low):.1f}" y1="{y:.1f}" x2="{sx(point.high):.1f}" y2="{y:.1f}" '
                        f'stroke="{point.color}" stroke-width="4" stroke-opacity="0.45"/>')
        body.append(f'<circle cx="{sx(point.value):.1f}" cy="{y:.1f}" r="4.5" fill="{point.color}">'
                    f'<title>{escape(point.label)}: {_label(point.value)}</title></circle>')
    return _uri(body, height)


def _edge_marker(x: float, y: float, colour: str, right_side: bool) -> str:
    """A triangle on the axis' edge pointing out of the plot: a value beyond the scale."""
    d = 6 if right_side else -6
    return (f'<polygon points="{x - d:.1f},{y - 5:.1f} {x:.1f},{y:.1f} {x - d:.1f},{y + 5:.1f}" '
            f'fill="{colour}"/>')


def curve_chart(title: str, curves: Sequence[Curve], xlabel: str, ylabel: str,
                bounds: Sequence[float | None] | None = None, cap: float | None = None) -> str:
    """Lines (one per model) with a shaded band when given; the legend below the plot. The y axis
    stays in ``bounds``. With a ``cap`` (the value a metric puts in place of an unbounded one:
    PSNR of identical frames), a curve lying on it is drawn dashed on the plot's top edge, named
    with its value in the legend, and the axis is scaled to the other models; a point where some
    samples were capped is a ring. Without one, a curve lying on a bound far from the others
    (:func:`off_scale`) goes to the edge the same way."""
    left, top, plot_h = 62, 30, 184
    bottom = top + plot_h
    xs = [float(x) for c in curves for x in c.x]
    x_low, x_high = (min(xs), max(xs)) if xs else (0.0, 1.0)
    if x_high == x_low:
        x_low, x_high = x_low - 0.5, x_high + 0.5
    levels = [_level(c) for c in curves]
    if cap is not None:
        edge = {i for i, level in enumerate(levels) if level is not None and level >= cap}
        edge = edge if len(edge) < len(curves) else set()  # every model capped: nothing else to scale to
    else:
        edge = off_scale(levels, [[*c.y, *(c.low or ()), *(c.high or ())] for c in curves], bounds)
    shown = [c for i, c in enumerate(curves) if i not in edge]
    y_low, y_high = _domain((v for c in shown for series in (c.y, c.low or (), c.high or ()) for v in series),
                            bounds)
    y_ticks = [t for t in nice_ticks(y_low, y_high, 4) if y_low - 1e-12 <= t <= y_high + 1e-12] or [y_low, y_high]
    y_low, y_high = min(y_low, y_ticks[0]), max(y_high, y_ticks[-1])

    def sx(v: float) -> float:
        return left + (WIDTH - 15 - left) * (v - x_low) / (x_high - x_low)

    def sy(v: float) -> float:
        return bottom - (bottom - top) * (min(max(v, y_low), y_high) - y_low) / (y_high - y_low)

    rings = any(any(c.capped or ()) for i, c in enumerate(curves) if i not in edge)
    legend_rows = ((len(curves) + 2) // 3 if len(curves) > 1 or edge else 0) + (1 if rings else 0)
    height = int(bottom + 46 + 16 * legend_rows)
    body = [f'<text x="8" y="16" font-size="12" fill="{INK}">{escape(title)}</text>']
    for t in y_ticks:
        body.append(f'<line x1="{left}" y1="{sy(t):.1f}" x2="{WIDTH - 15}" y2="{sy(t):.1f}" stroke="{GRID}"/>')
        body.append(f'<text x="{left - 6}" y="{sy(t) + 4:.1f}" text-anchor="end" fill="{INK}">{_label(t)}</text>')
    _x_axis(body, nice_ticks(x_low, x_high, 6), sx, top, bottom, xlabel)
    body.append(f'<text transform="translate(14 {(top + bottom) / 2:.1f}) rotate(-90)" text-anchor="middle" '
                f'fill="{INK}">{escape(ylabel)}</text>')
    for i, curve in enumerate(curves):
        pairs = [(float(x), float(y)) for x, y in zip(curve.x, curve.y) if _finite(x) and _finite(y)]
        if i in edge:  # on the bound, beyond the scale: a dashed line along the edge it lies beyond
            y = top if (levels[i] or 0) >= y_high else bottom
            if pairs:
                body.append(f'<line x1="{sx(pairs[0][0]):.1f}" y1="{y:.1f}" x2="{sx(pairs[-1][0]):.1f}" y2="{y:.1f}" '
                            f'stroke="{curve.color}" stroke-width="2.5" stroke-dasharray="6 4"/>')
            continue
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
            capped = dict(zip((float(x) for x in curve.x), curve.capped or ()))
            for x, y in pairs:
                if capped.get(x):
                    body.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="3.6" fill="#fff" stroke="{curve.color}" '
                                f'stroke-width="1.6"><title>{escape(curve.label)}: {capped[x]} sample(s) at the cap '
                                f'{_label(cap) if cap is not None else ""} here</title></circle>')
                else:
                    body.append(f'<circle cx="{sx(x):.1f}" cy="{sy(y):.1f}" r="2.2" fill="{curve.color}"/>')
    if legend_rows:
        column_w = (WIDTH - 20) / 3
        for i, curve in enumerate(curves):
            x, y = 10 + column_w * (i % 3), bottom + 44 + 16 * (i // 3)
            text = curve.label + ((f": {_label(levels[i])}, capped" if cap is not None else
                                   f": {_label(levels[i])} (bound, off this scale)") if i in edge else "")
            dash = ' stroke-dasharray="4 3"' if i in edge else ""
            body.append(f'<line x1="{x:.1f}" y1="{y - 4:.1f}" x2="{x + 14:.1f}" y2="{y - 4:.1f}" '
                        f'stroke="{curve.color}" stroke-width="3"{dash}/>')
            body.append(f'<text x="{x + 18:.1f}" y="{y:.1f}" fill="{INK}">{escape(_fit_text(text, column_w - 22))}'
                        f'<title>{escape(text)}</title></text>')
        if rings:
            y = bottom + 44 + 16 * (legend_rows - 1)
            body.append(f'<circle cx="17" cy="{y - 4:.1f}" r="3.6" fill="#fff" stroke="{INK}" stroke-width="1.6"/>')
            body.append(f'<text x="28" y="{y:.1f}" fill="{INK}">some samples at the cap'
                        f'{" " + _label(cap) if cap is not None else ""} (identical frames) at this point</text>')
    return _uri(body, height)


def _level(curve: Curve) -> float | None:
    """The curve's one value when it is flat (every point equal), else None."""
    ys = {float(y) for y in curve.y if _finite(y)}
    return ys.pop() if len(ys) == 1 else None


def _fit_text(text: str, width: float) -> str:
    """``text`` cut to about ``width`` pixels of 11 px sans-serif."""
    chars = max(4, int(width / 6.2))
    return text if len(text) <= chars else text[:chars - 1] + "…"
