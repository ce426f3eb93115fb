"""The functional twins of the controllability, memory and policy-evaluation measures equal their
closed forms; Spearman equals scipy's (ties included)."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from wfeval.functional import (
    action_accuracy,
    action_r2,
    action_sensitivity,
    bootstrap_rank_correlation,
    bucket_means,
    frame_pair_error,
    gap_bucket,
    majority_rate,
    policy_rank_correlation,
    return_error,
    revisit_errors,
    spearman,
)


def video(value: int, t: int = 5, h: int = 16, w: int = 16) -> np.ndarray:
    return np.full((t, h, w, 3), value, np.uint8)


def test_action_sensitivity_is_the_psnr_difference_of_constant_offsets():
    target = video(100)
    out = action_sensitivity(video(105), [video(120), video(140)], target)
    psnr = lambda d: 20 * math.log10(255 / d)  # noqa: E731 - MSE d² for a constant offset d
    expected = psnr(5) - (psnr(20) + psnr(40)) / 2
    assert out["value"] == pytest.approx(expected, abs=1e-9)
    assert out["psnr_true"] == pytest.approx(psnr(5)) and out["psnr_counterfactual"] == pytest.approx([psnr(20), psnr(40)])
    assert out["per_frame"] == pytest.approx([expected] * 5)


def test_a_model_that_ignores_its_actions_has_zero_action_sensitivity():
    same = video(90)
    target = np.random.default_rng(0).integers(0, 256, (5, 16, 16, 3)).astype(np.uint8)
    assert action_sensitivity(same, [same.copy(), same.copy(), same.copy()], target)["value"] == 0.0


def test_action_sensitivity_caps_each_psnr_and_skips_the_given_frames():
    target = video(100)
    generated = target.copy()
    generated[0] = 0  # the context frame, skipped
    out = action_sensitivity(generated, [video(110)], target, max_db=60.0, skip=1)
    assert out["value"] == pytest.approx(60.0 - 20 * math.log10(255 / 10))
    with pytest.raises(ValueError, match="shape"):
        action_sensitivity(target, [video(100, t=4)], target)


def test_action_accuracy_majority_rate_and_r2():
    assert action_accuracy([1, 2, 3, 0], [1, 2, 0, 0]) == 0.75
    assert majority_rate([3, 3, 1, 0, 3]) == 0.6
    truth = np.array([[0.0, 1.0], [2.0, -1.0], [4.0, 3.0]])
    variance = truth.var(axis=0)
    assert action_r2(truth, truth, variance) == 1.0
    assert action_r2(np.broadcast_to(truth.mean(axis=0), truth.shape), truth, variance) == pytest.approx(0.0)
    shifted = truth + [1.0, 0.0]  # MSE 1 on element 0, 0 on element 1
    assert action_r2(shifted, truth, variance) == pytest.approx(np.mean([1 - 1 / variance[0], 1.0]))


def test_frame_pair_error_compares_block_means_on_blocks_static_in_both_frames():
    a, b = video(100, t=1)[0], video(130, t=1)[0]
    full = np.ones((16, 16), bool)
    assert frame_pair_error(a, b, full, full, pool=8) == 30.0
    b[:8, :8] = 100  # the top-left block now agrees ...
    mask = full.copy()
    mask[8, 8] = False  # ... and the bottom-right block has one moving pixel: left out
    assert frame_pair_error(a, b, full, mask, pool=8) == pytest.approx((0 + 30 + 30) / 3)
    assert frame_pair_error(a, b, ~full, full, pool=8) is None


def test_pooling_shrinks_pixel_noise_but_not_a_redrawn_texture():
    rng = np.random.default_rng(0)
    base = rng.integers(60, 200, (64, 64, 3)).astype(np.uint8)
    noisy = np.clip(base + rng.normal(0, 10, base.shape).round(), 0, 255).astype(np.uint8)
    full = np.ones((64, 64), bool)
    assert frame_pair_error(base, noisy, full, full, pool=1) > 7.0  # E|N(0, 10)| ≈ 8
    assert frame_pair_error(base, noisy, full, full, pool=8) < 1.5  # σ/8 per block
    other = rng.integers(60, 200, (64, 64, 3)).astype(np.uint8)
    other_blocks = np.repeat(np.repeat(other[::8, ::8], 8, 0), 8, 1)  # a texture at the block scale
    base_blocks = np.repeat(np.repeat(base[::8, ::8], 8, 0), 8, 1)
    assert frame_pair_error(base_blocks, other_blocks, full, full, pool=8) > 30.0


def test_revisit_errors_gap_buckets_and_their_means():
    frames = np.stack([video(v, t=1)[0] for v in (10, 20, 10, 40, 10)])
    masks = np.ones(frames.shape[:3], bool)
    errors = revisit_errors(frames, [(0, 2), (0, 4), (1, 3)], masks, pool=8)
    assert errors == [(2, 0.0), (4, 0.0), (2, 20.0)]
    assert [gap_bucket(g) for g in (1, 2, 3, 4, 5, 16, 17)] == [1, 2, 4, 4, 8, 16, 32]
    assert bucket_means(errors) == {2: 10.0, 4: 0.0}
    with pytest.raises(ValueError, match="increasing"):
        revisit_errors(frames, [(3, 1)], masks)


@pytest.mark.parametrize("seed", range(5))
def test_spearman_equals_scipy_with_ties(seed):
    rng = np.random.default_rng(seed)
    x, y = rng.integers(0, 4, 12).astype(float), rng.normal(size=12)
    assert spearman(x, y) == pytest.approx(stats.spearmanr(x, y).statistic, abs=1e-12)


def test_spearman_of_a_constant_is_the_given_value():
    assert math.isnan(spearman([1, 1, 1], [1, 2, 3]))
    assert spearman([1, 1, 1], [1, 2, 3], constant=0.0) == 0.0


def test_policy_rank_correlation_and_return_error():
    true = np.array([[1.0, 0.5, 0.0], [0.8, 0.6, 0.1]])
    assert policy_rank_correlation(true, true) == 1.0
    reversed_ = true[:, ::-1]
    assert policy_rank_correlation(reversed_, true) == -1.0
    assert policy_rank_correlation(np.zeros_like(true), true) == 0.0  # a model whose returns all tie
    np.testing.assert_allclose(return_error(np.zeros_like(true), true), [0.5, 0.5])
    low, high = bootstrap_rank_correlation(true, true, n_resamples=200)
    assert low == high == 1.0
    noisy = true + np.array([[0.0, 0.6, 0.0], [0.0, -0.6, 0.0]])
    low, high = bootstrap_rank_correlation(noisy, true, n_resamples=500, seed=1)
    assert -1.0 <= low <= policy_rank_correlation(noisy, true) <= high <= 1.0 and low < high
