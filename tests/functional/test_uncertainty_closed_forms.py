"""The ensemble scores (wfeval.functional.uncertainty) against closed forms, hand-computed small
ensembles and scipy's Mann–Whitney U."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy import stats

from wfeval.functional import uncertainty as U


def gaussian_crps(mu: float, sigma: float, y: float) -> float:
    """CRPS of N(mu, sigma²) at y (Gneiting & Raftery 2007): σ [z(2Φ(z) − 1) + 2φ(z) − 1/√π]."""
    z = (y - mu) / sigma
    phi = math.exp(-z * z / 2) / math.sqrt(2 * math.pi)
    Phi = 0.5 * (1 + math.erf(z / math.sqrt(2)))
    return sigma * (z * (2 * Phi - 1) + 2 * phi - 1 / math.sqrt(math.pi))


def test_crps_of_a_hand_computed_ensemble():
    # members 0, 1, 3 at y = 2: E|X−y| = (2+1+1)/3; E|X−X'| over the 9 ordered pairs = 2(1+3+2)/9
    value = U.crps_ensemble(np.array([[0.0], [1.0], [3.0]]), np.array([2.0]))[0]
    assert value == pytest.approx(4 / 3 - 0.5 * 12 / 9)


def test_crps_of_one_member_is_its_absolute_error():
    assert U.crps_ensemble(np.array([[5.0, -1.0]]), np.array([2.0, 1.0])).tolist() == [3.0, 2.0]


@pytest.mark.parametrize("y", [0.0, 0.7, -2.5])
def test_crps_of_a_large_gaussian_ensemble_approaches_the_closed_form(y):
    draws = np.random.default_rng(0).normal(1.0, 2.0, size=(200_000, 1))
    assert U.crps_ensemble(draws, np.array([y]))[0] == pytest.approx(gaussian_crps(1.0, 2.0, y), rel=0.01)


def test_crps_matches_the_pairwise_definition_on_random_ensembles():
    rng = np.random.default_rng(1)
    x, y = rng.normal(size=(7, 3, 4)), rng.normal(size=(3, 4))
    pairwise = np.abs(x[:, None] - x[None, :]).mean(axis=(0, 1))
    np.testing.assert_allclose(U.crps_ensemble(x, y), np.abs(x - y).mean(axis=0) - 0.5 * pairwise, atol=1e-12)


def test_diversity_is_the_mean_difference_of_distinct_members():
    x = np.array([[0.0], [1.0], [3.0]])  # pairs (0,1) 1, (0,3) 3, (1,3) 2: mean 2
    assert U.sample_diversity(x)[0] == pytest.approx(2.0)
    assert U.sample_diversity(x[:1])[0] == 0.0


def test_coverage_is_exact_on_constructed_data():
    members = np.arange(19, dtype=np.float64)[:, None] * np.ones((1, 4))  # 0..18: 90% is the range, nominal 18/20
    assert U.interval_ranks(19, 0.9) == (1, pytest.approx(0.9))
    truth = np.array([-0.1, 0.0, 18.0, 18.1])
    assert U.interval_coverage(members, truth, level=0.9).tolist() == [False, True, True, False]
    assert U.interval_ranks(39, 0.9) == (2, pytest.approx(0.9))  # from the 2nd smallest to the 2nd largest
    assert U.interval_ranks(8, 0.9) == (1, pytest.approx(7 / 9))  # 8 members: the range, nominal 7/9


def test_coverage_of_an_exchangeable_truth_is_the_nominal_level():
    rng = np.random.default_rng(4)
    for n in (8, 19):
        members, truth = rng.normal(size=(n, 40_000)), rng.normal(size=40_000)
        covered = U.interval_coverage(members, truth, 0.9).mean()
        assert covered == pytest.approx(U.interval_ranks(n, 0.9)[1], abs=0.01)


def test_pit_is_the_mid_rank_among_the_n_plus_one_values():
    members = np.array([[1.0, 1.0, 5.0], [2.0, 1.0, 5.0], [3.0, 1.0, 5.0]])
    truth = np.array([2.5, 1.0, 0.0])  # 2 below; 3 equal; none below, none equal
    np.testing.assert_allclose(U.pit(members, truth), [(2 + 0.5) / 4, (0 + 2) / 4, 0.5 / 4])


def test_a_calibrated_ensemble_has_a_flat_pit_and_a_small_ece_and_an_overdispersed_one_does_not():
    rng = np.random.default_rng(2)
    members, truth = rng.normal(size=(19, 20_000)), rng.normal(size=20_000)  # truth exchangeable with members
    values = U.pit(members, truth)
    assert max(abs(h - 0.1) for h in U.pit_histogram(values, 10)) < 0.01
    assert U.calibration_error(values) < 0.01
    wide = U.pit(members * 3.0, truth)  # too wide: PIT piles up in the middle
    assert U.calibration_error(wide) > 0.1
    assert sum(U.pit_histogram(wide, 10)[4:6]) > 0.4


def test_ece_of_a_point_forecast_that_is_always_right():
    # every member equals the truth: PIT 0.5 everywhere; ECE = mean |1[0.5 <= p] − p| over p = .05 … .95
    levels = np.array(U.DEFAULT_LEVELS)
    expected = np.abs((0.5 <= levels).astype(float) - levels).mean()
    assert U.calibration_error(U.pit(np.zeros((1, 5)), np.zeros(5))) == pytest.approx(expected)


def test_auroc_matches_scipys_mann_whitney_u_with_ties():
    rng = np.random.default_rng(3)
    scores = rng.integers(0, 5, size=60).astype(float)  # many ties
    labels = rng.random(60) < 0.4
    u = stats.mannwhitneyu(scores[labels], scores[~labels]).statistic
    assert U.auroc(scores, labels) == pytest.approx(u / (labels.sum() * (~labels).sum()))
    assert U.auroc([1.0, 2.0], [True, True]) is None


def test_error_ranking_of_a_perfect_an_inverted_and_a_constant_uncertainty():
    errors = np.array([0.1, 0.4, 0.2, 0.9, 0.5, 0.3])
    assert U.error_ranking(errors * 2, errors) == {"spearman": pytest.approx(1.0), "auroc": pytest.approx(1.0)}
    assert U.error_ranking(-errors, errors) == {"spearman": pytest.approx(-1.0), "auroc": pytest.approx(0.0)}
    assert U.error_ranking(np.ones(6), errors) == {"spearman": None, "auroc": pytest.approx(0.5)}
    rho = stats.spearmanr([3, 1, 2, 2, 5, 4], errors).statistic
    assert U.error_ranking([3, 1, 2, 2, 5, 4], errors)["spearman"] == pytest.approx(rho)
