"""Paired differences (wfeval.stats.paired) against scipy's permutation test and bootstrap, and closed forms."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats as st

from wfeval.stats.paired import bootstrap_p, holm, paired_difference


def _scipy_p(a, b, statistic, n_resamples, seed=0):
    def diff(x, y, axis):
        return statistic(x, axis=axis) - statistic(y, axis=axis)

    return st.permutation_test((a, b), diff, permutation_type="samples", vectorized=True,
                               n_resamples=n_resamples, alternative="two-sided", random_state=seed).pvalue


@pytest.mark.parametrize("statistic,numpy_stat", [("mean", np.mean), ("median", np.median)])
def test_exact_permutation_p_equals_scipy_to_the_last_digit(statistic, numpy_stat):
    rng = np.random.default_rng(3)
    a = rng.normal(0, 1, 11)
    b = a + rng.normal(0.4, 0.8, 11)
    ours = paired_difference(a, b, statistic=statistic, n_resamples=4096)
    assert ours.exact and ours.n == 11
    assert ours.p_value == _scipy_p(a, b, numpy_stat, 4096)  # 2^11 = 2048 patterns: both enumerate them
    assert ours.estimate == pytest.approx(numpy_stat(a) - numpy_stat(b), abs=1e-15)


def test_monte_carlo_permutation_p_agrees_with_scipy_within_its_sampling_error():
    rng = np.random.default_rng(5)
    a = rng.normal(0, 1, 60)
    b = a + rng.normal(0.25, 0.7, 60)
    ours = paired_difference(a, b, n_resamples=20_000, seed=1)
    theirs = _scipy_p(a, b, np.mean, 20_000, seed=2)
    assert not ours.exact
    assert 0.01 < theirs < 0.5  # a p-value in the range where the comparison means something
    assert abs(ours.p_value - theirs) < 4 * np.sqrt(theirs * (1 - theirs) / 20_000) * 2


def test_bootstrap_interval_agrees_with_scipy_and_with_the_closed_form_standard_error():
    rng = np.random.default_rng(7)
    a = rng.normal(10, 2, 80)
    b = a - rng.normal(1.0, 1.5, 80)
    ours = paired_difference(a, b, n_resamples=20_000, seed=3)
    theirs = st.bootstrap((a, b), lambda x, y, axis: x.mean(axis) - y.mean(axis), paired=True, vectorized=True,
                          method="percentile", n_resamples=20_000, random_state=4).confidence_interval
    d = a - b
    se = d.std(ddof=0) / np.sqrt(d.size)  # the bootstrap distribution of a mean has this standard deviation
    assert abs(ours.low - theirs.low) < 0.1 * se and abs(ours.high - theirs.high) < 0.1 * se
    normal = 1.959964 * se
    assert ours.high - ours.low == pytest.approx(2 * normal, rel=0.05)
    assert ours.low < d.mean() < ours.high


def test_identical_values_give_no_difference_and_p_one():
    a = np.linspace(0, 1, 40)
    result = paired_difference(a, a.copy())
    assert (result.estimate, result.low, result.high, result.p_value) == (0.0, 0.0, 0.0, 1.0)


def test_a_constant_improvement_on_every_sample_reaches_the_smallest_possible_p():
    a = np.arange(32, dtype=float)
    exact = paired_difference(a + 1, a, n_resamples=1000)  # 2^32 patterns > 1000: Monte Carlo
    assert exact.p_value == pytest.approx(2 / 1001)  # no swap pattern is as extreme, +1 correction
    small = paired_difference(np.arange(6.0) + 1, np.arange(6.0))
    assert small.exact and small.p_value == 2 / 64  # only the two all-same-side patterns are as extreme


def test_holm_adjusts_by_rank_and_keeps_the_order():
    # sorted: 0.005 ×4 = 0.02; 0.01 ×3 = 0.03; 0.03 ×2 = 0.06; 0.04 ×1 = 0.04 → monotone 0.06
    assert holm([0.01, 0.04, 0.03, 0.005]) == pytest.approx([0.03, 0.06, 0.06, 0.02])
    assert holm([0.9, 0.8]) == [1.0, 1.0]  # 0.8 × 2 capped at 1; 0.9 × 1 raised to the running max
    assert holm([]) == []


def test_bootstrap_p_counts_the_far_side_of_zero():
    assert bootstrap_p(np.ones(999)) == pytest.approx(2 / 1000)
    assert bootstrap_p(np.r_[np.ones(500), -np.ones(500)]) == 1.0


def test_bad_inputs_are_refused_with_the_reason():
    with pytest.raises(ValueError, match="no shared sample"):
        paired_difference([], [])
    with pytest.raises(ValueError, match="same length"):
        paired_difference([1.0, 2.0], [1.0])
    with pytest.raises(ValueError, match="unknown statistic"):
        paired_difference([1.0], [2.0], statistic="mode")
