"""flicker, motion_magnitude and frame_repeat_rate equal their closed forms; flicker is VBench's."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from wfeval.benchmarks.gridworld import world
from wfeval.functional import flicker, frame_repeat_rate, motion_magnitude


def constant(t=6, h=9, w=13, c=3, value=120):
    return np.full((t, h, w, c), value, np.uint8)


def alternating(low, high, t=6, h=9, w=13, c=3):
    video = np.full((t, h, w, c), low, np.uint8)
    video[1::2] = high
    return video


def vbench_temporal_flickering(frames: np.ndarray) -> float:
    """VBench (vbench/temporal_flickering.py): (255 - mean of per-pair MAEs) / 255, written out."""
    maes = [np.mean(np.abs(frames[i].astype(np.float32) - frames[i + 1].astype(np.float32)))
            for i in range(len(frames) - 1)]
    return (255.0 - float(np.mean(maes))) / 255.0


def test_a_constant_video_never_flickers_never_moves_and_always_repeats():
    video = constant()
    assert float(flicker(video)) == 1.0
    assert float(motion_magnitude(video)) == 0.0
    assert float(frame_repeat_rate(video)) == 1.0


def test_a_black_white_alternating_video_is_the_worst_case_of_each():
    video = alternating(0, 255)
    assert float(flicker(video)) == 0.0
    assert float(motion_magnitude(video)) == 1.0
    assert float(frame_repeat_rate(video)) == 0.0


@pytest.mark.parametrize("step", [1, 5, 51, 200])
def test_flicker_of_an_alternating_video_is_one_minus_the_step_over_the_range(step):
    video = alternating(30, 30 + step)
    assert float(flicker(video)) == pytest.approx(1 - step / 255, abs=1e-12)
    assert float(flicker(video / 255.0, data_range=1.0)) == pytest.approx(1 - step / 255, abs=1e-12)
    assert flicker(video, per_frame=True).tolist() == pytest.approx([1 - step / 255] * 5, abs=1e-12)


def test_flicker_equals_vbench_on_a_real_looking_video():
    state = world.initial_state(4)
    video, _ = world.rollout(state, world.sample_actions(4, 15))
    assert float(flicker(video)) == pytest.approx(vbench_temporal_flickering(video), abs=1e-6)
    noisy = np.clip(video + np.random.default_rng(0).normal(0, 12, video.shape), 0, 255).astype(np.uint8)
    assert float(flicker(noisy)) == pytest.approx(vbench_temporal_flickering(noisy), abs=1e-6)
    assert float(flicker(noisy)) < float(flicker(video)) < 1.0


def test_motion_magnitude_is_the_share_of_pixels_a_moving_square_covers():
    video = np.zeros((3, 20, 20, 3), np.uint8)
    video[0, 2:6, 2:6] = 200  # a 4×4 square jumps to a disjoint place, then vanishes
    video[1, 10:14, 10:14] = 200
    assert motion_magnitude(video, per_frame=True).tolist() == [32 / 400, 16 / 400]
    small = alternating(100, 100 + 25)  # 25 levels: below the default 0.1 * 255 = 25.5
    assert float(motion_magnitude(small)) == 0.0
    assert float(motion_magnitude(small, threshold=0.05)) == 1.0


def test_a_pair_within_one_level_on_average_counts_as_a_repeat():
    one, two = alternating(50, 51), alternating(50, 52)
    assert float(frame_repeat_rate(one)) == 1.0
    assert float(frame_repeat_rate(two)) == 0.0
    assert float(frame_repeat_rate(two, threshold=2 / 255)) == 1.0
    video = constant()
    video[3:] = 90  # one cut among five steps
    assert frame_repeat_rate(video, per_frame=True).tolist() == [1, 1, 0, 1, 1]


def test_torch_twins_equal_the_numpy_values_and_batches_give_one_value_per_video():
    state = world.initial_state(9)
    video, _ = world.rollout(state, world.sample_actions(9, 7))
    batch = np.stack([video, constant(8, 64, 64), alternating(0, 255, 8, 64, 64)])
    for fn in (flicker, motion_magnitude, frame_repeat_rate):
        values = fn(batch)
        assert values.shape == (3,) and fn(batch, per_frame=True).shape == (3, 7)
        assert values[0] == pytest.approx(float(fn(video)), abs=1e-12)
        np.testing.assert_allclose(fn(torch.from_numpy(batch)).numpy(), values, rtol=0, atol=1e-6)
    assert flicker(batch).tolist()[1:] == [1.0, 0.0]


def test_temporal_metrics_need_two_frames_and_a_data_range_for_floats():
    with pytest.raises(ValueError, match="at least 2 frame"):
        flicker(constant(t=1))
    with pytest.raises(ValueError, match="data_range is required for float64"):
        flicker(constant() / 255.0)
    with pytest.raises(ValueError, match="threshold must be in"):
        motion_magnitude(constant(), threshold=1.5)
