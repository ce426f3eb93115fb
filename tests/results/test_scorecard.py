"""Scorecards normalise declared components into one score; a missing metric is never a 0."""

from __future__ import annotations

import pytest

from wfeval.results.scorecard import normalize, scorecard


def test_minmax_maps_anchors_to_unit_interval_clips_and_flips_for_lower_is_better():
    spec = {"normalizer": "minmax", "low": 10.0, "high": 50.0}
    assert normalize(30.0, spec, True) == 0.5
    assert normalize(60.0, spec, True) == 1.0
    assert normalize(0.0, spec, True) == 0.0
    assert normalize(20.0, spec, False) == 0.75


def test_zscore_and_identity_follow_the_direction():
    assert normalize(400.0, {"normalizer": "zscore", "mean": 300.0, "std": 50.0}, False) == -2.0
    assert normalize(0.3, {"normalizer": "identity"}, True) == 0.3
    assert normalize(0.3, {"normalizer": "identity"}, False) == -0.3


def test_bad_normalizer_specs_are_rejected_with_the_reason():
    with pytest.raises(ValueError, match="low != high"):
        normalize(1.0, {"normalizer": "minmax", "low": 1.0, "high": 1.0}, True)
    with pytest.raises(ValueError, match="unknown normalizer 'rank'"):
        normalize(1.0, {"normalizer": "rank"}, True)


def test_overall_score_is_the_weighted_mean_of_normalized_components():
    spec = {"primary": "psnr", "components": {
        "psnr": {"weight": 3.0, "normalizer": "minmax", "low": 10.0, "high": 50.0},
        "fvd": {"weight": 1.0, "normalizer": "minmax", "low": 0.0, "high": 1000.0}}}
    card = scorecard(spec, {"psnr": 30.0, "fvd": 250.0}, {"psnr": True, "fvd": False})
    assert card["score"] == pytest.approx((3 * 0.5 + 1 * 0.75) / 4)
    assert card["missing"] == [] and card["primary"] == "psnr"


def test_a_missing_component_gives_no_overall_score_but_a_labelled_partial_one():
    spec = {"components": {"psnr": {"normalizer": "minmax", "low": 10.0, "high": 50.0},
                           "fvd": {"normalizer": "minmax", "low": 0.0, "high": 1000.0}}}
    card = scorecard(spec, {"psnr": 30.0, "fvd": None}, {"psnr": True, "fvd": False})
    assert card["score"] is None
    assert card["missing"] == ["fvd"]
    assert card["partial_score"] == 0.5
    assert card["components"]["fvd"] == {"value": None, "normalized": None, "weight": 1.0, "missing": True}
