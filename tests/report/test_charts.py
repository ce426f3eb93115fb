"""The report's SVG charts: round ticks, values placed in proportion, text escaped, same bytes."""

from __future__ import annotations

import base64
import re

from wfeval.report.html.charts import Curve, Point, curve_chart, interval_chart, nice_ticks


def _svg(uri: str) -> str:
    assert uri.startswith("data:image/svg+xml;base64,")
    return base64.b64decode(uri.split(",", 1)[1]).decode("utf-8")


def test_ticks_are_round_steps_covering_the_range():
    assert nice_ticks(0.85, 1.0) == [0.85, 0.9, 0.95, 1.0]
    assert nice_ticks(12, 107) == [20, 40, 60, 80, 100]
    assert nice_ticks(-3, 3, 6) == [-3, -2, -1, 0, 1, 2, 3]


def test_dots_are_placed_in_proportion_to_their_values():
    svg = _svg(interval_chart("psnr", [Point("a", 10.0, 8.0, 12.0), Point("b", 30.0), Point("c", None)], True))
    xs = [float(x) for x in re.findall(r'<circle cx="([\d.]+)"', svg)]
    bar = re.search(r'<line x1="([\d.]+)" y1="[\d.]+" x2="([\d.]+)"[^>]*stroke-width="4"', svg)
    assert len(xs) == 2 and xs[0] < xs[1]
    assert float(bar.group(1)) < xs[0] < float(bar.group(2))
    assert abs((xs[0] - float(bar.group(1))) - (float(bar.group(2)) - xs[0])) < 0.2  # symmetric interval
    assert "not measured" in svg and "(higher is better)" in svg


def test_labels_are_escaped_and_the_same_data_gives_the_same_bytes():
    curves = [Curve("<m&1>", [1, 2, 3], [3.0, 2.0, 1.0], [2.5, 1.5, 0.5], [3.5, 2.5, 1.5]),
              Curve("m2", [1, 2, 3], [1.0, 1.0, 1.0])]
    uri = curve_chart("t", curves, "frame", "psnr")
    svg = _svg(uri)
    assert "&lt;m&amp;1&gt;" in svg and "<m&1>" not in svg
    assert svg.count("<polyline") == 2 and svg.count("<polygon") == 1
    assert curve_chart("t", curves, "frame", "psnr") == uri
