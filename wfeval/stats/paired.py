"""Paired comparison of two models on the same samples: difference, bootstrap interval, permutation p.

Two runs scored the same samples: ``a[i]`` and ``b[i]`` are the two models' values of sample
``i``. The comparison is of the aggregate each reports (``mean`` — also a ``ratio`` of 0/1
values —, ``median`` or ``geomean``) on the shared samples:

* **difference** ``stat(a) − stat(b)``;
* **paired bootstrap interval**: samples resampled with replacement, each keeping its pair
  (``a`` and ``b`` of the same sample move together), percentile interval of the resampled
  differences;
* **permutation p-value** (two-sided): under "no difference" the two values of a sample are
  exchangeable, so each permutation swaps ``a[i]`` and ``b[i]`` for a random subset of samples
  (for the mean: a sign flip of ``a[i] − b[i]``). With ``2**n`` patterns at most
  ``n_resamples`` every pattern is enumerated (exact test); otherwise ``n_resamples`` random ones
  and ``p = (k + 1) / (n_resamples + 1)``. ``p`` is twice the smaller one-sided tail, at most 1 —
  the definition of ``scipy.stats.permutation_test(..., permutation_type="samples")``, which the
  tests compare against.
* :func:`holm` adjusts a family of p-values for multiple comparisons (Holm–Bonferroni: controls
  the family-wise error rate, uniformly more powerful than Bonferroni).

Everything is seeded (``seed``): the same inputs give the same numbers. Work is done in chunks
of at most ``CHUNK`` resampled values, so memory stays bounded whatever ``n``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Sequence

import numpy as np

STATISTICS = ("mean", "ratio", "median", "geomean")
CHUNK = 4_000_000  # resampled values held at once (32 MB of float64)
N_RESAMPLES = 10_000


@dataclass(frozen=True)
class PairedDifference:
    """``estimate`` = stat(a) − stat(b) on ``n`` pairs, its interval and its p-value."""

    estimate: float
    low: float
    high: float
    p_value: float
    n: int
    statistic: str
    confidence: float
    n_resamples: int
    exact: bool  # every swap pattern enumerated

    def to_dict(self) -> dict:
        return {"estimate": self.estimate, "ci_low": self.low, "ci_high": self.high, "p_value": self.p_value,
                "n": self.n, "statistic": self.statistic, "confidence": self.confidence,
                "n_resamples": self.n_resamples, "exact_permutation": self.exact}


def _stat(name: str) -> Callable[[np.ndarray], np.ndarray]:
    """The aggregate along the last axis."""
    if name in ("mean", "ratio"):
        return lambda x: x.mean(axis=-1)
    if name == "median":
        return lambda x: np.median(x, axis=-1)
    if name == "geomean":
        return lambda x: np.exp(np.log(x).mean(axis=-1))
    raise ValueError(f"unknown statistic {name!r}; valid: {', '.join(STATISTICS)}")


def _pairs(a: Sequence[float], b: Sequence[float], statistic: str) -> tuple[np.ndarray, np.ndarray]:
    x, y = np.asarray(a, dtype=np.float64), np.asarray(b, dtype=np.float64)
    if x.ndim != 1 or x.shape != y.shape:
        raise ValueError(f"a and b must be 1-d arrays of the same length (one value per shared sample), "
                         f"got shapes {x.shape} and {y.shape}")
    if x.size == 0:
        raise ValueError("no shared sample: a paired comparison needs values of both models on the same samples")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("a and b must be finite")
    if statistic == "geomean" and (x.min() <= 0 or y.min() <= 0):
        raise ValueError("geomean needs positive values")
    return x, y


def paired_difference(a: Sequence[float], b: Sequence[float], *, statistic: str = "mean",
                      n_resamples: int = N_RESAMPLES, confidence: float = 0.95, seed: int = 0) -> PairedDifference:
    """Difference of ``statistic`` between paired values ``a`` and ``b`` (see the module)."""
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    stat = _stat(statistic)
    x, y = _pairs(a, b, statistic)
    estimate = float(stat(x) - stat(y))
    rng = np.random.default_rng(seed)
    boot = bootstrap_differences(x, y, stat, n_resamples, rng)
    alpha = 1.0 - confidence
    low, high = np.percentile(boot, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    p, exact = permutation_p(x, y, stat, estimate, n_resamples, rng)
    return PairedDifference(estimate, float(low), float(high), p, int(x.size), statistic, float(confidence),
                            int(n_resamples), exact)


def _rows_per_chunk(n: int) -> int:
    return max(1, CHUNK // max(n, 1))


def bootstrap_differences(x: np.ndarray, y: np.ndarray, stat: Callable[[np.ndarray], np.ndarray],
                          n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """``stat(x[idx]) − stat(y[idx])`` for ``n_resamples`` resamples ``idx`` of the pairs."""
    n, out, done = x.size, np.empty(n_resamples), 0
    while done < n_resamples:
        rows = min(_rows_per_chunk(n), n_resamples - done)
        idx = rng.integers(0, n, size=(rows, n))
        out[done:done + rows] = stat(x[idx]) - stat(y[idx])
        done += rows
    return out


def _swapped(x: np.ndarray, y: np.ndarray, swap: np.ndarray, stat) -> np.ndarray:
    return stat(np.where(swap, y, x)) - stat(np.where(swap, x, y))


def permutation_p(x: np.ndarray, y: np.ndarray, stat: Callable[[np.ndarray], np.ndarray], observed: float,
                  n_resamples: int, rng: np.random.Generator) -> tuple[float, bool]:
    """Two-sided p-value of ``observed`` under within-pair exchange; (p, exact)."""
    n = x.size
    exact = n < 63 and 2 ** n <= n_resamples
    # a permuted statistic equal to the observed one up to round-off counts as equal (scipy's tolerance)
    tolerance = abs(observed) * 100 * np.finfo(np.float64).eps
    less = greater = 0
    if exact:
        total = 2 ** n
        bits = np.arange(n, dtype=np.int64)
        for start in range(0, total, _rows_per_chunk(n)):
            codes = np.arange(start, min(total, start + _rows_per_chunk(n)), dtype=np.int64)
            null = _swapped(x, y, (codes[:, None] >> bits) & 1 == 1, stat)
            less += int((null <= observed + tolerance).sum())
            greater += int((null >= observed - tolerance).sum())
        p = 2 * min(less, greater) / total
    else:
        done = 0
        while done < n_resamples:
            rows = min(_rows_per_chunk(n), n_resamples - done)
            null = _swapped(x, y, rng.integers(0, 2, size=(rows, n), dtype=np.int8) == 1, stat)
            less += int((null <= observed + tolerance).sum())
            greater += int((null >= observed - tolerance).sum())
            done += rows
        p = 2 * (min(less, greater) + 1) / (n_resamples + 1)
    return float(min(p, 1.0)), exact


def bootstrap_p(differences: np.ndarray) -> float:
    """Two-sided p-value from resampled differences: twice the share on the far side of 0 (at most 1),
    with the +1 of a Monte Carlo estimate. For statistics a permutation would make too costly (FVD)."""
    boot = np.asarray(differences, dtype=np.float64)
    below, above = int((boot <= 0).sum()), int((boot >= 0).sum())
    return float(min(1.0, 2 * (min(below, above) + 1) / (boot.size + 1)))


def holm(p_values: Sequence[float]) -> list[float]:
    """Holm–Bonferroni adjusted p-values, in the order given: the ``k``-th smallest of ``m`` is
    ``max_{j<=k} min(1, (m − j + 1) · p_(j))``. Reject where the adjusted p is below alpha."""
    p = np.asarray(p_values, dtype=np.float64)
    m = p.size
    if m == 0:
        return []
    order = np.argsort(p, kind="stable")
    adjusted = np.minimum(1.0, np.maximum.accumulate((m - np.arange(m)) * p[order]))
    out = np.empty(m)
    out[order] = adjusted
    return [float(v) for v in out]
