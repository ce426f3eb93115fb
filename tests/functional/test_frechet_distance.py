"""Fréchet distance from eigenvalues, streaming statistics and the bootstrap, against direct formulas."""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg

from wfeval.functional import frechet_distance
from wfeval.stats.frechet import FrechetStats, bootstrap_frechet, frechet_distance_features, trace_sqrt_product


def _spd(rng, dim, rank=None):
    a = rng.standard_normal((dim, rank or dim + 10))
    return a @ a.T / a.shape[1]


def _direct(mu1, cov1, mu2, cov2):
    root = scipy.linalg.sqrtm(cov1 @ cov2)
    return float(((mu1 - mu2) ** 2).sum() + np.trace(cov1) + np.trace(cov2) - 2 * np.trace(root).real)


@pytest.mark.parametrize("dim", [2, 16, 64, 400])
def test_agrees_with_scipy_sqrtm_within_1e_6_relative(dim):
    rng = np.random.default_rng(dim)
    for _ in range(3):
        mu1, mu2 = rng.standard_normal(dim), rng.standard_normal(dim)
        cov1, cov2 = _spd(rng, dim), _spd(rng, dim) * rng.uniform(0.5, 2.0)
        assert frechet_distance(mu1, cov1, mu2, cov2) == pytest.approx(_direct(mu1, cov1, mu2, cov2), rel=1e-6)


def test_rank_deficient_covariances_agree_too():
    rng = np.random.default_rng(1)
    mu1, mu2 = rng.standard_normal(64), rng.standard_normal(64)
    cov1, cov2 = _spd(rng, 64, rank=10), _spd(rng, 64)
    assert frechet_distance(mu1, cov1, mu2, cov2) == pytest.approx(_direct(mu1, cov1, mu2, cov2), rel=1e-6)


def test_equal_covariances_leave_the_squared_mean_distance():
    rng = np.random.default_rng(2)
    for rank in (None, 5):
        cov = _spd(rng, 50, rank=rank)
        mu1, mu2 = rng.standard_normal(50), rng.standard_normal(50)
        assert frechet_distance(mu1, cov, mu2, cov) == pytest.approx(((mu1 - mu2) ** 2).sum(), rel=1e-9, abs=1e-9)
        assert trace_sqrt_product(cov, cov) == pytest.approx(np.trace(cov), rel=1e-9, abs=1e-9)
    assert frechet_distance(mu1, cov, mu1, cov) == pytest.approx(0.0, abs=1e-9)


def test_bad_inputs_are_refused():
    with pytest.raises(ValueError, match="same length"):
        frechet_distance(np.zeros(3), np.eye(3), np.zeros(4), np.eye(4))
    with pytest.raises(ValueError, match="cov2 must have shape"):
        frechet_distance(np.zeros(3), np.eye(3), np.zeros(3), np.eye(2))
    with pytest.raises(ValueError, match="non-finite"):
        frechet_distance(np.array([0, np.nan, 0]), np.eye(3), np.zeros(3), np.eye(3))


@pytest.mark.parametrize("covariance", ["N", "N-1"])
def test_streaming_statistics_equal_the_batch_ones(covariance):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((300, 20)) * 5 + 100  # a large mean: the shifted sums keep precision
    stats = FrechetStats()
    for chunk in np.array_split(x, 7):
        stats.update(chunk)
    ddof = 0 if covariance == "N" else 1
    np.testing.assert_allclose(stats.mean(), x.mean(axis=0), rtol=1e-12)
    np.testing.assert_allclose(stats.cov(covariance), np.cov(x, rowvar=False, ddof=ddof), rtol=1e-9, atol=1e-9)
    merged = FrechetStats().update(x[:100]).merge(FrechetStats().update(x[100:]))
    np.testing.assert_allclose(merged.cov(covariance), stats.cov(covariance), rtol=1e-9, atol=1e-9)
    restored = FrechetStats.from_arrays(stats.to_arrays())
    assert restored.n == 300 and np.array_equal(restored.cov(covariance), stats.cov(covariance))
    assert stats.outer.shape == (20, 20)  # memory is O(d²), not O(N)


@pytest.mark.parametrize("n", [30, 150])  # below and above the dimension (two computation routes)
def test_distance_from_features_matches_the_covariance_formula(n):
    rng = np.random.default_rng(n)
    x1, x2 = rng.standard_normal((n, 64)), rng.standard_normal((n + 7, 64)) + 0.3
    for covariance, ddof in (("N", 0), ("N-1", 1)):
        expected = _direct(x1.mean(0), np.cov(x1, rowvar=False, ddof=ddof), x2.mean(0), np.cov(x2, rowvar=False, ddof=ddof))
        assert frechet_distance_features(x1, x2, covariance) == pytest.approx(expected, rel=1e-6)
        s1, s2 = FrechetStats().update(x1), FrechetStats().update(x2)
        assert s1.distance(s2, covariance) == pytest.approx(expected, rel=1e-6)


def test_bootstrap_is_seeded_and_paired_resampling_keeps_identical_sets_at_zero():
    rng = np.random.default_rng(4)
    x1, x2 = rng.standard_normal((40, 16)), rng.standard_normal((40, 16)) + 0.5
    first = bootstrap_frechet(x1, x2, n_resamples=200, seed=7)
    assert first == bootstrap_frechet(x1, x2, n_resamples=200, seed=7)
    assert first != bootstrap_frechet(x1, x2, n_resamples=200, seed=8)
    assert first["low"] < first["high"] and first["n_resamples"] == 200 and first["level"] == 0.95
    assert first["bootstrap_mean"] > frechet_distance_features(x1, x2)  # duplicates inflate the distance
    units = np.arange(40)
    same = bootstrap_frechet(x1, x1, n_resamples=100, units1=units, units2=units)
    assert same["high"] == pytest.approx(0.0, abs=1e-9)  # independent resampling would be far above 0
    assert bootstrap_frechet(x1, x1, n_resamples=100)["low"] > 0.1
    with pytest.raises(ValueError, match="both units1 and units2"):
        bootstrap_frechet(x1, x2, units1=units)
