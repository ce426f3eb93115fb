"""The bootstrap works on multiplicities (weighted d×d moments) and gives, resample for resample,
the distances of the resampled sets built row by row (the former implementation, kept here as
the reference)."""

from __future__ import annotations

import numpy as np
import pytest

from wfeval.stats.frechet import _fd_features, bootstrap_frechet, bootstrap_values, covariance_ddof


def _reference_values(x1, x2, *, covariance, n_resamples, seed, units1=None, units2=None):
    """The former bootstrap: copy every resampled set and fit it from scratch."""
    ddof = covariance_ddof(covariance)
    rng = np.random.default_rng(seed)
    n1, n2 = len(x1), len(x2)
    values = []
    if units1 is not None:
        n_units = int(max(units1.max(), units2.max())) + 1
    for _ in range(n_resamples):
        if units1 is None:
            a, b = x1[rng.integers(0, n1, n1)], x2[rng.integers(0, n2, n2)]
        else:
            counts = np.bincount(rng.integers(0, n_units, n_units), minlength=n_units)
            a, b = np.repeat(x1, counts[units1], axis=0), np.repeat(x2, counts[units2], axis=0)
            if min(len(a), len(b)) < ddof + 1:
                continue
        values.append(_fd_features(a, b, ddof)[0])
    return np.asarray(values)


@pytest.mark.parametrize("covariance", ["N", "N-1"])
@pytest.mark.parametrize(("n", "dim"), [(24, 40), (90, 12)])  # N×N route (N < d) and d×d route (N > d)
@pytest.mark.parametrize("paired", [False, True])
def test_each_resample_matches_the_copied_set_within_1e_6(covariance, n, dim, paired):
    rng = np.random.default_rng(n + dim)
    x1 = rng.standard_normal((n, dim)) * np.linspace(0.5, 3.0, dim) + 4.0  # offsets: centring matters
    x2 = rng.standard_normal((n, dim)) @ rng.standard_normal((dim, dim)) * 0.3 + 4.5
    units = {"units1": np.arange(n), "units2": np.arange(n)} if paired else {}
    fast = bootstrap_values(x1, x2, covariance=covariance, n_resamples=40, seed=3, **units)
    slow = _reference_values(x1, x2, covariance=covariance, n_resamples=40, seed=3, **units)
    assert fast.shape == slow.shape == (40,)
    np.testing.assert_allclose(fast, slow, rtol=1e-6, atol=0)
    assert len(set(np.round(fast, 6))) > 30  # the resamples really differ


def test_units_shared_between_rows_and_missing_sides_follow_the_former_rules():
    rng = np.random.default_rng(11)
    x1, x2 = rng.standard_normal((30, 8)), rng.standard_normal((20, 8)) + 1.0
    u1, u2 = rng.integers(0, 25, 30), rng.integers(0, 25, 20)  # some units only on one side
    fast = bootstrap_values(x1, x2, covariance="N-1", n_resamples=60, seed=5, units1=u1, units2=u2)
    slow = _reference_values(x1, x2, covariance="N-1", n_resamples=60, seed=5, units1=u1, units2=u2)
    np.testing.assert_allclose(fast, slow, rtol=1e-6)
    interval = bootstrap_frechet(x1, x2, covariance="N-1", n_resamples=60, seed=5, units1=u1, units2=u2)
    assert interval["n_used"] == len(fast)
    assert interval["low"] == pytest.approx(np.percentile(slow, 2.5), rel=1e-6)
    assert interval["high"] == pytest.approx(np.percentile(slow, 97.5), rel=1e-6)
