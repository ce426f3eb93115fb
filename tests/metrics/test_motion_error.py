"""motion_error: the dynamics error PSNR hides, against closed forms, in numpy, torch and a run."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from tests.conftest import compose
from wfeval.api import GenerationResult
from wfeval.functional import mae, motion_error, psnr
from wfeval.metrics.reference import MotionError
from wfeval.pipeline import build
from wfeval.pipeline.metric_nodes import metric_nodes
from wfeval.storage.artifacts import ArtifactStore, read_array

H = W = 16


def _moving_square(frames: int, value: int = 200, background: int = 40) -> np.ndarray:
    """An 8×8 square moving 8 px right per frame (never overlapping its previous place)."""
    video = np.full((frames, H, 4 * 8, 3), background, np.uint8)
    for t in range(frames):
        video[t, 4:12, 8 * t:8 * t + 8] = value
    return video


def test_a_ramp_against_a_still_video_is_the_step_of_the_ramp():
    still = np.zeros((5, H, W, 3), np.uint8)
    ramp = np.stack([np.full((H, W, 3), 10 * t, np.uint8) for t in range(5)])
    assert motion_error(ramp, still) == pytest.approx(10.0)
    np.testing.assert_allclose(motion_error(ramp, still, per_frame=True), [10.0] * 4)


def test_a_constant_colour_shift_has_no_motion_error_but_an_absolute_error():
    video = _moving_square(4)
    shifted = video + np.uint8(7)
    assert motion_error(shifted, video) == 0.0
    assert mae(shifted, video) == pytest.approx(7.0)


def test_a_frozen_video_scores_the_motion_it_misses_where_psnr_barely_moves():
    reference = _moving_square(4)
    frozen = np.repeat(reference[:1], 4, axis=0)
    # each reference step changes two 8×8 squares by |200 - 40| in every channel; frozen: nothing
    expected = 2 * 64 * 160 / (H * 32)
    assert motion_error(frozen, reference) == pytest.approx(expected)
    assert motion_error(reference, reference) == 0.0
    assert float(psnr(frozen, reference, data_range=255)) > 10.0  # PSNR stays moderate on mostly static frames


def test_the_torch_twin_equals_numpy():
    rng = np.random.default_rng(0)
    a, b = (rng.integers(0, 256, (2, 6, H, W, 3), dtype=np.uint8) for _ in range(2))
    expected = motion_error(a, b, per_frame=True)
    got = motion_error(torch.from_numpy(a), torch.from_numpy(b), per_frame=True).double().numpy()
    np.testing.assert_allclose(got, expected, rtol=1e-6)


def test_the_metric_counts_the_change_out_of_the_conditioning_frame(tmp_path):
    store = ArtifactStore(tmp_path)
    cfg = compose(["benchmark.num_samples=1"])
    [request] = build.build_benchmark(cfg).requests(store=store, task=build.build_task(cfg),
                                                    protocol=build.build_protocol(cfg))
    reference = read_array(request.references["video"])
    frozen = np.repeat(reference[:1], len(reference), axis=0)
    result = GenerationResult(sample_id=request.sample_id, artifacts={"generated_video": store.put_array(frozen, kind="video")})
    row = MotionError(skip_frames=1).compute_sample(request, result)
    assert row.status == "ok" and row.components["first_frame"] == 1
    assert len(row.components["per_frame"]) == len(reference) - 1  # transitions 0→1 … 14→15
    assert row.raw_value == pytest.approx(float(motion_error(frozen, reference)))
    exact = MotionError(skip_frames=1).compute_sample(request, GenerationResult(
        sample_id=request.sample_id, artifacts={"generated_video": store.put_array(reference, kind="video")}))
    assert exact.raw_value == 0.0 and row.raw_value > 0


def test_motion_error_is_a_builtin_selectable_by_id_and_alias():
    metrics = build.build_metrics(metric_nodes(compose(["metric=[motion_error]"])))
    assert isinstance(metrics["motion_error"], MotionError) and metrics["motion_error"].skip_frames == 1
    nodes = metric_nodes(compose(["extra_metrics=[dynamics_error]"]))
    assert nodes["motion_error"]["_target_"] == "wfeval.metrics.reference.MotionError"
