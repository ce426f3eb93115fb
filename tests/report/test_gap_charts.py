"""The report's memory curves: each run's aggregate curve over the gap, drawn as the aggregate gives it."""

from __future__ import annotations

import base64
import re
from types import SimpleNamespace

from wfeval.report.html.gaps import _curve, gap_charts
from wfeval.results.record import Aggregate, RunResults


def _agg(curve):
    return {"diagnostics": {"value": 1.0, "curve_over": "gap",
                            "curve": {str(b): {"mean": m, "interval": {"low": m - 1, "high": m + 1}, "n": 8}
                                      for b, m in curve.items()}}}


def _run(label, results):
    return SimpleNamespace(label=label, color="#123456", results=RunResults.from_dict({
        "results": results, "metrics": {"maze.revisit_error": {"unit": "uint8 levels"}}}))


def _svg(uri: str) -> str:
    return base64.b64decode(uri.split(",", 1)[1]).decode()


def test_each_models_curve_over_the_gap_is_its_aggregates_buckets_in_order():
    assert _curve(Aggregate.from_dict(_agg({256: 17.9, 8: 0.0, 32: 15.4}))) == ([8, 32, 256], [0.0, 15.4, 17.9], [-1.0, 14.4, 16.9],
                                                            [1.0, 16.4, 18.9])
    assert _curve(Aggregate.from_dict({"diagnostics": {"value": 3.0}})) is None  # psnr keeps no curve


def test_one_chart_per_measure_with_a_curve_and_a_line_per_model_that_has_one():
    runs = [_run("oracle", {"maze.revisit_error": _agg({8: 0.0, 32: 0.0, 256: 0.0}), "maze.psnr": {"diagnostics": {}}}),
            _run("forgetful", {"maze.revisit_error": _agg({8: 0.0, 32: 15.0, 256: 18.0})}),
            _run("other", {})]
    charts = gap_charts(runs, ["maze.psnr", "maze.revisit_error"])
    assert [c["metric"] for c in charts] == ["revisit_error"] and charts[0]["buckets"] == [8, 32, 256]
    svg = _svg(charts[0]["uri"])
    assert len(re.findall("<polyline", svg)) == 2 and "revisit_error (uint8 levels)" in svg
    assert "log₂ of the bucket" in svg
