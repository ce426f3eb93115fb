"""The FVD metric: per-sample feature refs, a set-level aggregate rebuilt from persisted rows alone."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.features._weights import require_i3d_weights
from wfeval.api import GenerationRequest, GenerationResult, MetricResult
from wfeval.features.weights import CONVERTED_SHA256
from wfeval.metrics.fvd import FVD
from wfeval.stats.frechet import frechet_distance_features
from wfeval.storage.artifacts import ArtifactStore
from wfeval.storage.features import ReferenceStatsCache


def _video(seed: int, frames: int = 16) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 256, (1, 32, 32, 3))
    return np.clip(base + np.arange(frames)[:, None, None, None] * rng.integers(-8, 9), 0, 255).astype(np.uint8)


def _pairs(store: ArtifactStore, generated: dict[int, np.ndarray | None], n: int = 4):
    out = []
    for i in range(n):
        request = GenerationRequest(sample_id=f"s{i}", references={"video": store.put_array(_video(i), kind="video")})
        video = generated.get(i)
        if video is None:
            result = GenerationResult(sample_id=f"s{i}", status="failed", error="boom")
        else:
            result = GenerationResult(sample_id=f"s{i}", artifacts={"generated_video": store.put_array(video, kind="video")})
        out.append((request, result))
    return out


@pytest.fixture(scope="module")
def scored(tmp_path_factory):
    require_i3d_weights()
    root = tmp_path_factory.mktemp("fvd")
    store = ArtifactStore(root / "store")
    # two exact copies (extracted once with their reference), one other video, one failed generation
    pairs = _pairs(store, {0: _video(0), 1: _video(1), 2: _video(10)})
    metric = FVD(feature_dir=str(root / "features"), bootstrap=200)
    rows = [metric.compute_sample(q, r) for q, r in pairs]
    return metric, rows, root, store


def test_per_sample_rows_hold_feature_refs_and_no_fvd(scored):
    _, rows, _, _ = scored
    assert [r.status for r in rows] == ["ok", "ok", "ok", "skip"]
    for row in rows[:3]:
        assert row.raw_value is None and row.valid
        assert set(row.artifact_refs) == {"reference_features", "generated_features"}
        assert row.artifact_refs["generated_features"].shape == (400,)
        assert row.diagnostics["weights_sha256"] == CONVERTED_SHA256
    assert rows[0].artifact_refs["reference_features"] == rows[0].artifact_refs["generated_features"]  # same content
    assert rows[3].skip_reason == "missing required artifact(s) generated_video (generation failed: boom)"
    assert set(rows[3].artifact_refs) == {"reference_features"}  # its reference still counts


def test_aggregate_reports_fvd_with_n_recipe_rank_flag_and_ci(scored):
    metric, rows, _, _ = scored
    agg = metric.aggregate(rows)
    assert agg.valid and (agg.n_total, agg.n_valid, agg.n_skipped) == (4, 3, 1)
    assert agg.diagnostics["value"] == agg.raw_stats["fvd"] > 0
    assert (agg.raw_stats["n_real"], agg.raw_stats["n_generated"], agg.raw_stats["feature_dim"]) == (4, 3, 400)
    assert agg.diagnostics["rank_deficient"] is True and "N (real 4, generated 3)" in agg.diagnostics["rank_note"]
    assert agg.diagnostics["recipe"]["clip_length"] == 16 and agg.diagnostics["recipe"]["covariance"] == "N"
    assert agg.diagnostics["weights"]["sha256"] == CONVERTED_SHA256
    ci = agg.confidence_interval
    assert ci["method"] == "bootstrap_percentile" and ci["n_resamples"] == 200 and ci["low"] <= ci["high"]
    assert agg.skip_breakdown == {"missing required artifact(s) generated_video (generation failed: boom)": 1}
    features = {k: np.stack([np.load(r.artifact_refs[k].uri) for r in rows if k in r.artifact_refs]).astype(float)
                for k in ("reference_features", "generated_features")}
    expected = frechet_distance_features(features["reference_features"], features["generated_features"])
    assert agg.raw_stats["fvd"] == pytest.approx(expected, rel=1e-9)


def test_rows_reloaded_from_json_rebuild_the_same_aggregate_in_a_fresh_metric(scored):
    metric, rows, root, _ = scored
    first = metric.aggregate(rows)
    reloaded = [MetricResult.from_dict(json.loads(json.dumps(r.to_dict()))) for r in reversed(rows)]
    fresh = FVD(feature_dir=str(root / "features"), bootstrap=200)
    again = fresh.aggregate(reloaded)
    key = again.diagnostics["reference_stats"]["key"]
    assert ReferenceStatsCache(fresh._root()).load(key) is not None  # the reference statistics were cached
    assert again.to_dict() == first.to_dict()  # the whole aggregate, diagnostics included


def test_without_bootstrap_the_cached_reference_statistics_give_the_same_value(scored):
    metric, rows, root, _ = scored
    with_ci = metric.aggregate(rows)
    cached = FVD(feature_dir=str(root / "features"), bootstrap=0)
    plain = cached.aggregate(rows)
    assert ReferenceStatsCache(cached._root()).load(plain.diagnostics["reference_stats"]["key"]) is not None
    assert plain.confidence_interval == {}
    assert plain.raw_stats["fvd"] == pytest.approx(with_ci.raw_stats["fvd"], rel=1e-9)


def test_a_short_generated_video_is_skipped_with_the_reason(scored):
    metric, _, _, store = scored
    [(request, result)] = _pairs(store, {0: _video(0, frames=8)}, n=1)
    row = metric.compute_sample(request, result)
    assert row.status == "skip"
    assert row.skip_reason == "generated video: video has 8 frames, fewer than clip_length 16"
    assert "reference_features" in row.artifact_refs


def test_rows_of_another_recipe_are_never_mixed(scored):
    metric, rows, root, _ = scored
    other = FVD(feature_dir=str(root / "features"), resize_mode="bilinear_tf1")
    agg = other.aggregate(rows)
    assert not agg.valid and "another feature recipe" in agg.diagnostics["reason"]


def test_a_missing_feature_file_invalidates_the_aggregate_with_the_fix(scored, tmp_path):
    metric, rows, _, _ = scored
    ref = rows[2].artifact_refs["generated_features"]
    moved = tmp_path / "moved.npy"
    Path(ref.uri).rename(moved)
    try:
        agg = metric.aggregate(rows)
    finally:
        moved.rename(ref.uri)
    assert not agg.valid and "re-score the run" in agg.diagnostics["reason"]
    assert "value" not in agg.diagnostics


def test_without_weights_every_sample_is_skipped_and_no_number_is_reported(tmp_path):
    metric = FVD(fetch=False, cache_dir=str(tmp_path / "empty"), feature_dir=str(tmp_path / "features"))
    store = ArtifactStore(tmp_path / "store")
    rows = [metric.compute_sample(q, r) for q, r in _pairs(store, {0: _video(0), 1: _video(1)}, n=2)]
    assert {r.status for r in rows} == {"skip"}
    assert "I3D weights unavailable, no FVD" in rows[0].skip_reason
    assert "python -m wfeval.features.fetch" in rows[0].skip_reason
    agg = metric.aggregate(rows)
    assert not agg.valid and agg.n_valid == 0 and "value" not in agg.diagnostics


@pytest.mark.parametrize(("kwargs", "match"), [({"covariance": "N-2"}, "covariance"), ({"bootstrap": -1}, "bootstrap"),
                                              ({"clip_length": 4}, "clip_length"),
                                              ({"bootstrap_mode": "both"}, "bootstrap_mode")])
def test_bad_config_values_are_refused_at_build_time(kwargs, match):
    with pytest.raises(ValueError, match=match):
        FVD(**kwargs)
