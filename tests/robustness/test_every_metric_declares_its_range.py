"""Intervals outside the range, again: every registered metric declares its range (the registry is
enumerated, so a new metric without one fails here), latency-like metrics lead with a robust
statistic, and no interval leaves the declared range -- the cases the issue saw (``spl`` [0.013, 1.32],
``step_latency`` [-24.4, 75.8] ms) among them."""

from __future__ import annotations

import math

import pytest

from wfeval.api import MetricResult
from wfeval.config.code import import_target
from wfeval.metrics.registry import REGISTRY, builtin_targets

METRICS = sorted(builtin_targets().items())


def _build(metric_id: str):
    cls = import_target(dict(METRICS)[metric_id])
    kwargs = {"weights": "none", "fetch": False} if metric_id == "fvd" else {}
    return cls, cls(**kwargs)


@pytest.mark.parametrize("metric_id", [m for m, _ in METRICS])
def test_every_registered_metric_declares_a_range(metric_id):
    cls, metric = _build(metric_id)
    low, high = metric.bounds
    assert (low, high) != (None, None), f"{metric_id}: no bounds declared on {cls.__qualname__}"
    assert low is None or high is None or low <= high
    assert all(b is None or math.isfinite(b) for b in (low, high))
    assert list(cls.spec().metadata["bounds"]) == list(cls.bounds)  # the spec says the same


def test_the_registry_lists_what_the_config_files_name():
    assert set(REGISTRY.ids()) >= {m for m, _ in METRICS}
    assert {"spl", "step_latency", "steps_to_goal", "real_time_factor", "fvd", "goal_success"} <= set(REGISTRY.ids())


def _rows(metric_id, values) -> list[MetricResult]:
    from wfeval.metrics.outcomes import scored

    return [scored(f"s{i}", metric_id, v, components={"latencies_ms": [v]} if metric_id == "step_latency" else {})
            for i, v in enumerate(values)]


@pytest.mark.parametrize("metric_id", ["step_latency", "real_time_factor"])
def test_timings_lead_with_the_median_and_one_slow_sample_cannot_drag_the_interval_below_zero(metric_id):
    _, metric = _build(metric_id)
    values = [1.0, 1.1, 0.9, 1.05, 0.95, 1.0, 1.02, 250.0]  # one sample that hit a swap storm
    out = metric.aggregate(_rows(metric_id, values))
    assert metric.aggregator == "median" and out.diagnostics["value"] == pytest.approx(1.01)
    ci = out.confidence_interval
    assert ci["method"].startswith("bootstrap") and 0.0 <= ci["low"] <= 1.01 <= ci["high"] < 250.0
    assert metric.statistics[0] == "median" and "mean" in out.normalized_stats


def test_spl_interval_never_exceeds_one():
    _, metric = _build("spl")
    out = metric.aggregate(_rows("spl", [1.0, 1.0, 1.0, 0.0, 1.0, 1.0]))
    ci = out.confidence_interval
    assert ci["high"] <= 1.0 and ci["low"] >= 0.0 and "clipped" in ci["method"]
    assert ci["unclipped"][1] > 1.0  # what the normal interval said, kept for the record


@pytest.mark.parametrize("metric_id", ["steps_to_goal", "fvd", "agent_position_error", "motion_error"])
def test_a_metric_open_above_is_closed_at_zero(metric_id):
    _, metric = _build(metric_id)
    assert metric.bounds[0] == 0.0
