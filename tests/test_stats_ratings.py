"""Bradley–Terry ratings, their Elo scale and bootstrap intervals, and Cohen's/Fleiss' κ, each
checked against an independent reference: the closed form for two models, a general-purpose
optimiser (scipy) for three, and published textbook tables for κ."""

from __future__ import annotations

import math

import numpy as np
import pytest
from scipy.optimize import minimize

from wfeval.stats.ratings import (
    ELO_BASE,
    bootstrap_ratings,
    bradley_terry,
    cohen_kappa,
    elo,
    fleiss_kappa,
    win_matrix,
)


def test_two_models_recover_the_log_odds_of_their_win_share():
    # p = wins / total  <->  θ_A − θ_B = log(p / (1 − p)) (the prior vanishingly small)
    theta = bradley_terry(np.array([[0, 7], [3, 0]]), prior=1e-9)
    assert theta[0] - theta[1] == pytest.approx(math.log(7 / 3), abs=1e-6)
    assert theta.sum() == pytest.approx(0.0, abs=1e-12)


def test_an_elo_gap_of_400_points_is_ten_to_one_odds():
    theta = bradley_terry(np.array([[0, 100], [10, 0]]), prior=1e-9)
    ratings = elo(theta)
    assert ratings[0] - ratings[1] == pytest.approx(400.0, abs=1e-3)
    assert ratings.mean() == pytest.approx(ELO_BASE)


def test_three_models_match_a_general_optimiser_of_the_same_likelihood():
    wins = np.array([[0, 8, 6], [3, 0, 7], [2, 4, 0]], float)
    prior = 0.01

    def negative(theta):
        diff = theta[:, None] - theta[None, :]
        return -(wins * -np.logaddexp(0, -diff)).sum() + 0.5 * prior * (theta ** 2).sum()

    reference = minimize(negative, np.zeros(3), method="Nelder-Mead",
                         options={"xatol": 1e-10, "fatol": 1e-12, "maxiter": 20000}).x
    assert bradley_terry(wins, prior) == pytest.approx(reference - reference.mean(), abs=1e-5)


def test_a_tie_is_half_a_win_for_each_side():
    with_ties = win_matrix([0, 0, 1], [1, 1, 0], [False, True, False], 2)
    assert with_ties[0, 1] == 1.5 and with_ties[1, 0] == 1.5
    # all ties: equal strengths
    assert bradley_terry(win_matrix([0, 1], [1, 0], [True, True], 2)).tolist() == pytest.approx([0.0, 0.0])


def test_an_unbeaten_model_stays_finite_under_the_prior():
    theta = bradley_terry(np.array([[0, 20], [0, 0]]))
    assert np.isfinite(theta).all() and theta[0] > 2.0


def test_intervals_shrink_as_votes_grow_and_cover_the_estimate():
    rng = np.random.default_rng(0)

    def width(n):
        winners = (rng.random(n) < 0.7).astype(int)  # model 1 wins 70%
        r = bootstrap_ratings(winners, 1 - winners, np.zeros(n, bool), 2, n_resamples=500, seed=1)
        assert (r.low <= r.elo).all() and (r.elo <= r.high).all()
        return float((r.high - r.low).mean())

    assert width(400) < 0.6 * width(40)


def test_cohens_kappa_of_the_textbook_table():
    # Wikipedia "Cohen's kappa": 50 proposals, yes/yes 20, yes/no 5, no/yes 10, no/no 15 -> κ = 0.4
    first = ["y"] * 20 + ["y"] * 5 + ["n"] * 10 + ["n"] * 15
    second = ["y"] * 20 + ["n"] * 5 + ["y"] * 10 + ["n"] * 15
    assert cohen_kappa(first, second) == pytest.approx(0.4)


def test_fleiss_kappa_of_the_textbook_table():
    # Fleiss (1971) as worked in Wikipedia "Fleiss' kappa": 10 subjects, 14 raters, 5 categories -> κ ≈ 0.210
    table = np.array([[0, 0, 0, 0, 14], [0, 2, 6, 4, 2], [0, 0, 3, 5, 6], [0, 3, 9, 2, 0], [2, 2, 8, 1, 1],
                      [7, 7, 0, 0, 0], [3, 2, 6, 3, 0], [2, 5, 3, 2, 2], [6, 5, 2, 1, 0], [0, 2, 2, 3, 7]])
    assert fleiss_kappa(table) == pytest.approx(0.20993, abs=1e-4)


def test_fleiss_kappa_refuses_items_with_unequal_rater_counts():
    with pytest.raises(ValueError, match="same number"):
        fleiss_kappa(np.array([[2, 0], [1, 2]]))
