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
