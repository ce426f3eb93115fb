"""Honest statistics: no interval leaves its metric's valid range, a clip is named in the method,
and skip_breakdown counts reasons by kind, not one bucket per sample."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wfeval import stats
from wfeval.metrics.base import default_aggregate, worst_value
from wfeval.metrics.outcomes import reason_category, scored, skipped


def _rows(values, metric="m"):
    return [scored(f"s-{i:04d}", metric, float(v)) for i, v in enumerate(values)]


CASES = [
    # (case, values, bounds, the bound the normal interval would cross)
    ("ssim_near_1", [1.0] * 9 + [0.7], (-1.0, 1.0), "high"),
    ("capped_psnr_near_max", [100.0] * 8 + [30.0, 40.0], (0.0, 100.0), "high"),
    ("rate_near_0", [0.0] * 9 + [0.9], (0.0, 1.0), "low"),
    ("count_near_0", [0] * 9 + [5], (0.0, None), "low"),
    ("flicker_near_1", [1.0] * 5 + [0.2], (0.0, 1.0), "high"),
]


@pytest.mark.parametrize("values, bounds, side", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_an_interval_never_leaves_the_metrics_range_and_the_clip_is_recorded(values, bounds, side):
    agg = default_aggregate("m", _rows(values), bounds=bounds)
    ci = agg.confidence_interval
    low_b, high_b = (b if b is not None else math.inf * (1 if i else -1) for i, b in enumerate(bounds))
    assert low_b <= ci["low"] <= ci["high"] <= high_b
    span = f"[{bounds[0]:g}, {'inf' if bounds[1] is None else f'{bounds[1]:g}'}]"
    assert ci["method"] == f"normal (clipped to {span})"
    # the unclipped interval (the independent reference: mean ± z·s/√n) is kept and did cross the bound
    arr = np.asarray(values, dtype=float)
    half = 1.959963984540054 * arr.std(ddof=1) / math.sqrt(arr.size)
    assert ci["unclipped"] == pytest.approx([arr.mean() - half, arr.mean() + half])
    crossed = ci["unclipped"][1] > bounds[1] if side == "high" else ci["unclipped"][0] < bounds[0]
    assert crossed


def test_an_interval_inside_the_range_is_untouched_byte_for_byte():
    values = [0.5, 0.6, 0.55, 0.52]
    plain = default_aggregate("m", _rows(values))
    bounded = default_aggregate("m", _rows(values), bounds=(0.0, 1.0))
    assert bounded.to_dict() == plain.to_dict() and bounded.confidence_interval["method"] == "normal"


def test_wilson_and_bootstrap_intervals_of_in_range_values_stay_inside_without_a_clip():
    ratio = stats.summarize([1] * 20, aggregator="ratio", bounds=(0.0, 1.0))
    assert ratio.confidence_interval["method"] == "wilson" and ratio.confidence_interval["high"] == 1.0
    median = stats.summarize([1.0] * 9 + [0.2], aggregator="median", bounds=(0.0, 1.0))
    assert median.confidence_interval["method"] == "bootstrap_percentile"
    assert median.confidence_interval["high"] <= 1.0


def test_inverted_bounds_are_refused():
    with pytest.raises(ValueError, match="low <= high"):
        stats.summarize([1.0, 2.0], bounds=(1.0, 0.0))


@pytest.mark.parametrize("metric_path, bounds", [
    ("wfeval.metrics.reference:SSIM", (-1.0, 1.0)), ("wfeval.metrics.reference:PSNR", (0.0, 100.0)),
    ("wfeval.metrics.reference:MAE", (0.0, 255.0)), ("wfeval.metrics.reference:MSE", (0.0, 255.0 ** 2)),
    ("wfeval.metrics.temporal:Flicker", (0.0, 1.0)), ("wfeval.metrics.temporal:FrameRepeatRate", (0.0, 1.0)),
    ("wfeval.metrics.temporal:MotionMagnitude", (0.0, 1.0)), ("wfeval.metrics.basic:GeneratedRate", (0.0, 1.0)),
    ("wfeval.metrics.basic:ArtifactCount", (0.0, None)), ("wfeval.metrics.control:ActionFollowing", (0.0, 1.0)),
    ("wfeval.metrics.control:AgentPositionError", (0.0, None)),
])
def test_every_builtin_metric_declares_its_range_once(metric_path, bounds):
    import importlib

    module, _, name = metric_path.partition(":")
    cls = getattr(importlib.import_module(module), name)
    assert tuple(cls().bounds) == bounds and tuple(cls.spec().metadata["bounds"]) == tuple(cls.bounds)


def test_bounds_follow_the_metrics_options():
    from wfeval.metrics.reference import MAE, PSNR

    assert PSNR(max_db=60).bounds == (0.0, 60.0) and MAE(data_range=1.0).bounds == (0.0, 1.0)
    assert worst_value(PSNR(max_db=60)) == 0.0 and worst_value(MAE(data_range=1.0)) == 1.0


def test_a_capped_psnr_aggregate_through_the_metric_never_exceeds_max_db():
    from wfeval.metrics.reference import PSNR

    metric = PSNR(max_db=100.0)
    agg = metric.aggregate(_rows([100.0] * 8 + [30.0, 40.0], "psnr"))
    assert agg.confidence_interval["high"] == 100.0 and "clipped to [0, 100]" in agg.confidence_interval["method"]


def test_skip_breakdown_counts_by_reason_not_by_sample():
    rows = [skipped(f"s-{i:04d}", "m", f"generated video shape ({i + 10}, 64, 64, 3) differs from the reference "
                                       f"(16, 64, 64, 3) for sample 's-{i:04d}'") for i in range(5)]
    rows += _rows([1.0, 2.0])
    agg = default_aggregate("m", rows)
    assert agg.skip_breakdown == {"generated video shape (N, N, N, N) differs from the reference (N, N, N, N) "
                                  "for sample '…'": 5}
    assert rows[0].skip_reason.endswith("'s-0000'")  # the detail stays on the sample's row


@pytest.mark.parametrize("reason, category", [
    ("error: ZeroDivisionError", "error: ZeroDivisionError"),
    ("I3D weights unavailable", "I3D weights unavailable"),
    ("needs a video of at least 2 frames (T×H×W×C), got shape (1, 64, 64, 3)",
     "needs a video of at least N frames (T×H×W×C), got shape (N, N, N, N)"),
    ("no frame left after skip_frames=3", "no frame left after skip_frames=N"),
])
def test_reason_categories_drop_only_the_sample_specific_detail(reason, category):
    assert reason_category(reason) == category


def test_an_explicit_category_wins_over_the_derived_one():
    rows = [skipped("a", "m", "missing x (generation failed: boom on 'a')", category="missing x (generation failed)"),
            skipped("b", "m", "missing x (generation failed: other on 'b')", category="missing x (generation failed)")]
    assert default_aggregate("m", rows).skip_breakdown == {"missing x (generation failed)": 2}
