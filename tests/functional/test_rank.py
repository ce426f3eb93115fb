"""The effective rank (RankMe) in closed form: exp of the entropy of the normalised singular values
(to 1e-4: RankMe's ε = 1e-7 adds about ε·|log ε| per singular value)."""

from __future__ import annotations

import numpy as np
import pytest

from wfeval.functional.rank import effective_rank


def test_equal_singular_values_give_their_count_and_one_direction_gives_one():
    rng = np.random.default_rng(0)
    q, _ = np.linalg.qr(rng.standard_normal((40, 40)))
    assert effective_rank(q[:, :5] * 3.0) == pytest.approx(5.0, rel=1e-4)  # 5 orthogonal columns of equal norm
    assert effective_rank(np.outer(rng.standard_normal(30), rng.standard_normal(8))) == pytest.approx(1.0, rel=1e-4)
    assert effective_rank(np.ones((12, 64)) * 0.7) == pytest.approx(1.0, rel=1e-4)  # collapsed: one latent for all


def test_unequal_singular_values_give_the_exponential_of_their_entropy():
    z = np.diag([3.0, 1.0, 0.0])
    p = np.array([0.75, 0.25])
    assert effective_rank(z) == pytest.approx(float(np.exp(-(p * np.log(p)).sum())), rel=1e-4)  # 1.7548


def test_the_rank_does_not_depend_on_the_latents_scale_and_refuses_non_finite_ones():
    z = np.random.default_rng(1).standard_normal((50, 6))
    assert effective_rank(z * 1e200) == pytest.approx(effective_rank(z), rel=1e-9)
    assert effective_rank(np.zeros((4, 3))) == 0.0
    with pytest.raises(ValueError, match="NaN"):
        effective_rank(np.array([[np.nan, 1.0]]))


def test_wide_latents_with_repeated_rows_have_the_rank_of_every_row_decomposed():
    """Above ``ROWS_ONCE_WIDTH`` repeated rows are decomposed once, weighted by their count: the rank of the
    SVD of every row (to 1e-12), zeros included for the rows repeated; narrower latents are decomposed whole."""
    from wfeval.functional.rank import EPS, ROWS_ONCE_WIDTH

    def every_row(z):
        sigma = np.linalg.svd(z / np.abs(z).max(), compute_uv=False)
        p = sigma / sigma.sum() + EPS
        return float(np.exp(-np.sum(p * np.log(p))))

    rng = np.random.default_rng(2)
    for width in (ROWS_ONCE_WIDTH, ROWS_ONCE_WIDTH + 1):
        distinct = rng.standard_normal((7, width)) * np.array([5.0, 3.0, 2.0, 1.0, 1.0, 0.5, 0.1])[:, None]
        z = distinct[[0, 1, 1, 2, 3, 3, 3, 4, 5, 6, 0, 2]]
        if width <= ROWS_ONCE_WIDTH:
            assert effective_rank(z) == every_row(z)
        else:
            assert effective_rank(z) == pytest.approx(every_row(z), rel=1e-12)
