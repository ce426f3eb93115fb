"""Per-sample behaviour of psnr/ssim/mse/mae, the temporal and the control metrics on real requests."""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from tests.conftest import compose
from wfeval.api import GenerationResult
from wfeval.config.trust import TrustPolicy, UntrustedTargetError, activated
from wfeval.metrics.control import ActionFollowing, AgentPositionError
from wfeval.metrics.reference import MAE, MSE, PSNR, SSIM
from wfeval.metrics.temporal import Flicker, FrameRepeatRate, MotionMagnitude
from wfeval.pipeline import build
from wfeval.storage.artifacts import ArtifactStore, read_array


@pytest.fixture(scope="module")
def store(tmp_path_factory):
    return ArtifactStore(tmp_path_factory.mktemp("store"))


@pytest.fixture(scope="module")
def request_(store):
    cfg = compose(["benchmark.num_samples=1"])
    [req] = build.build_benchmark(cfg).requests(store=store, task=build.build_task(cfg),
                                                protocol=build.build_protocol(cfg))
    return req


def result_of(store, request_, video) -> GenerationResult:
    return GenerationResult(sample_id=request_.sample_id, artifacts={"generated_video": store.put_array(video, kind="video")})


def reference(request_):
    return read_array(request_.references["video"])


def test_psnr_of_an_exact_copy_is_the_cap_with_every_frame_counted_as_capped(store, request_):
    row = PSNR(skip_frames=1).compute_sample(request_, result_of(store, request_, reference(request_)))
    assert row.status == "ok" and row.raw_value == 100.0
    assert row.components["frames_capped"] == 15 and list(row.components["per_frame"]) == [100.0] * 15
    assert row.components["first_frame"] == 1
    assert "NaN" not in json.dumps(row.to_dict()) and "Infinity" not in json.dumps(row.to_dict())


def test_psnr_average_mode_and_per_frame_curve(store, request_):
    ref = reference(request_)
    noisy = np.clip(ref + np.random.default_rng(0).normal(0, 8, ref.shape), 0, 255).astype(np.uint8)
    result = result_of(store, request_, noisy)
    frames = PSNR().compute_sample(request_, result)
    mse_mode = PSNR(average="mse").compute_sample(request_, result)
    curve = frames.components["per_frame"]
    assert len(curve) == 16 and frames.raw_value == pytest.approx(np.mean(curve))
    mse = np.mean((noisy.astype(float) - ref) ** 2)
    assert mse_mode.raw_value == pytest.approx(10 * np.log10(255**2 / mse))
    assert frames.diagnostics["variant"] == "psnr(average=frames, max_db=100, data_range=255)"


@pytest.mark.parametrize("cls", [PSNR, SSIM, MSE, MAE])
def test_reference_metrics_skip_without_a_reference_or_with_another_shape(store, request_, cls):
    no_ref = dataclasses.replace(request_, references={})
    row = cls().compute_sample(no_ref, result_of(store, request_, reference(request_)))
    assert row.status == "skip" and row.skip_reason == "no reference video (references['video'])"
    short = cls().compute_sample(request_, result_of(store, request_, reference(request_)[:10]))
    assert short.status == "skip" and "differs from the reference (16, 64, 64, 3)" in short.skip_reason


def test_ssim_mse_mae_of_the_initial_frame_repeated(store, request_):
    ref = reference(request_)
    frozen = np.repeat(ref[:1], 16, axis=0)
    result = result_of(store, request_, frozen)
    ssim_row, mse_row, mae_row = (m(skip_frames=1).compute_sample(request_, result) for m in (SSIM, MSE, MAE))
    assert 0.5 < ssim_row.raw_value < 1.0 and len(ssim_row.components["per_frame"]) == 15
    diff = frozen[1:].astype(float) - ref[1:]
    assert mse_row.raw_value == pytest.approx(np.mean(diff**2))
    assert mae_row.raw_value == pytest.approx(np.mean(np.abs(diff)))


def test_temporal_metrics_score_the_generated_video_alone(store, request_):
    frozen = np.repeat(reference(request_)[:1], 16, axis=0)
    result = result_of(store, request_, frozen)
    values = [m().compute_sample(request_, result) for m in (Flicker, MotionMagnitude, FrameRepeatRate)]
    assert [r.raw_value for r in values] == [1.0, 0.0, 1.0]
    assert len(values[0].components["per_step"]) == 15
    one = Flicker().compute_sample(request_, result_of(store, request_, frozen[:1]))
    assert one.status == "skip" and "at least 2 frames" in one.skip_reason


def test_action_following_and_position_error_of_the_true_video(store, request_):
    result = result_of(store, request_, reference(request_))
    follow = ActionFollowing().compute_sample(request_, result)
    error = AgentPositionError().compute_sample(request_, result)
    assert (follow.raw_value, error.raw_value) == (1.0, 0.0)
    assert follow.components["steps"] == 15 and follow.components["frames_not_found"] == 0
    assert follow.diagnostics["locator"] == "ColorLocator"


def test_control_metrics_skip_what_they_cannot_score(store, request_):
    result = result_of(store, request_, reference(request_))
    no_actions = dataclasses.replace(request_, controls={})
    assert ActionFollowing().compute_sample(no_actions, result).skip_reason == \
        "no actions in the request (controls['actions'])"
    no_track = dataclasses.replace(request_, metadata={})
    assert ActionFollowing().compute_sample(no_track, result).status == "ok"  # commanded actions suffice
    assert AgentPositionError().compute_sample(no_track, result).skip_reason == \
        "no true agent track (metadata['agent_positions'])"
    short = ActionFollowing().compute_sample(request_, result_of(store, request_, reference(request_)[:5]))
    assert short.status == "skip" and "15 actions need 16 frames" in short.skip_reason


def test_the_locator_can_be_a_target_mapping_or_an_import_path(store, request_):
    result = result_of(store, request_, reference(request_))
    by_target = ActionFollowing(locator={"_target_": "wfeval.functional.control.ColorLocator", "tolerance": 10})
    assert by_target.locator.tolerance == 10.0
    by_path = ActionFollowing(locator="wfeval.functional.control:ColorLocator")
    assert by_path.compute_sample(request_, result).raw_value == 1.0
    with pytest.raises(UntrustedTargetError, match="metric.action_following.locator: 'nowhere.Locator'"):
        ActionFollowing(locator="nowhere.Locator")  # code from an import path: trusted first (docs/trust.md)
    with activated(TrustPolicy(prefixes=("nowhere.",))), pytest.raises(ValueError, match="cannot import 'nowhere.Locator'"):
        ActionFollowing(locator="nowhere.Locator")
    with pytest.raises(TypeError, match="expected a callable, a _target_ mapping or an import path"):
        ActionFollowing(locator=42)


def test_bad_options_fail_when_the_metric_is_built():
    with pytest.raises(ValueError, match="max_db must be a finite number > 0"):
        PSNR(max_db=float("inf"))
    with pytest.raises(ValueError, match="average must be one of"):
        PSNR(average="geometric")
    with pytest.raises(ValueError, match="skip_frames must be >= 0"):
        SSIM(skip_frames=-1)
    with pytest.raises(ValueError, match=r"metric.motion_magnitude.threshold must be in \[0, 1\)"):
        MotionMagnitude(threshold=25.0)
