"""Scores of a predictive distribution given as an ensemble of N samples, against the truth.

Every function takes ``samples`` of shape ``N×...`` (N draws of the same prediction) and ``truth``
of shape ``...``; N = 1 is a point forecast (CRPS is then its absolute error).

- :func:`crps_ensemble`: the continuous ranked probability score of the ensemble's empirical
  distribution, ``E|X − y| − ½ E|X − X'|`` (Gneiting & Raftery 2007), computed exactly from the
  sorted members (O(N log N) per element);
- :func:`sample_diversity`: ``E|X − X'|`` over pairs of distinct members (0 for one member);
- :func:`interval_coverage`: whether the truth lies in the ensemble's central interval for
  ``level``, between order statistics (:func:`interval_ranks`: the interval's nominal coverage for an
  exchangeable truth, exact for a finite ensemble, where sample quantiles under-cover);
- :func:`pit`: the probability integral transform of the truth under the ensemble, by mid-rank
  among the N + 1 values (uniform on [0, 1] when the truth is exchangeable with the members);
- :func:`pit_histogram` and :func:`calibration_error` (ECE: the mean over quantile levels p of
  ``|P(PIT ≤ p) − p|``);
- :func:`auroc` and :func:`error_ranking`: does a reported uncertainty rank
  the actual errors (rank correlation, and AUROC of "error above the median")?
"""

from __future__ import annotations

from typing import Any

import numpy as np

from wfeval.functional.ranking import _ranks, spearman

__all__ = ["crps_ensemble", "sample_diversity", "interval_ranks", "interval_coverage", "pit", "pit_histogram", "calibration_error",
           "auroc", "error_ranking"]

DEFAULT_LEVELS = tuple(np.round(np.arange(0.05, 1.0, 0.05), 2).tolist())  # 0.05 … 0.95


def _pair(samples: Any, truth: Any) -> tuple[np.ndarray, np.ndarray]:
    x = np.asarray(samples, dtype=np.float64)
    y = np.asarray(truth, dtype=np.float64)
    if x.ndim < 1 or x.shape[0] < 1 or x.shape[1:] != y.shape:
        raise ValueError(f"samples of shape {x.shape} against truth of shape {y.shape}: expected N×{y.shape}, N >= 1")
    return x, y


def _mean_abs_pair_difference(x: np.ndarray) -> np.ndarray:
    """``(1/N²) Σᵢ Σⱼ |xᵢ − xⱼ|`` along axis 0, from the sorted members: ``(2/N²) Σᵢ (2i − N − 1) x₍ᵢ₎``."""
    n = x.shape[0]
    weights = (2.0 * np.arange(1, n + 1) - n - 1).reshape((n,) + (1,) * (x.ndim - 1))
    return 2.0 * (weights * np.sort(x, axis=0)).sum(axis=0) / n**2


def crps_ensemble(samples: Any, truth: Any) -> np.ndarray:
    """Per element: CRPS of the ensemble's empirical distribution, ``E|X − y| − ½ E|X − X'|``."""
    x, y = _pair(samples, truth)
    return np.abs(x - y).mean(axis=0) - 0.5 * _mean_abs_pair_difference(x)


def sample_diversity(samples: Any) -> np.ndarray:
    """Per element: mean absolute difference between two distinct members (0 for one member)."""
    x = np.asarray(samples, dtype=np.float64)
    n = x.shape[0]
    if n < 2:
        return np.zeros(x.shape[1:])
    return _mean_abs_pair_difference(x) * n / (n - 1)


def interval_ranks(n: int, level: float) -> tuple[int, float]:
    """The central interval of ``n`` members for ``level``: ``(j, nominal)``, the interval from the
    j-th smallest to the j-th largest member, ``j = max(1, floor((1 − level)/2 · (n + 1)))``, and
    ``nominal = (n + 1 − 2j)/(n + 1)``, its coverage when the truth is exchangeable with the members
    (its rank among the n + 1 values uniform): ``level`` itself when ``(1 − level)/2 · (n + 1)`` is an
    integer (n = 19 for 90%), wider otherwise (n = 8: the range, 7/9)."""
    if not 0.0 < level < 1.0:
        raise ValueError(f"level must be in (0, 1), got {level}")
    if n < 2:
        raise ValueError(f"an interval needs at least 2 members, got {n}")
    j = max(1, int(np.floor((1.0 - level) / 2.0 * (n + 1) + 1e-9)))
    return j, (n + 1 - 2 * j) / (n + 1)


def interval_coverage(samples: Any, truth: Any, level: float = 0.9) -> np.ndarray:
    """Per element: True when the truth lies in the members' central interval for ``level`` (order
    statistics, bounds included; :func:`interval_ranks` gives the interval and its nominal coverage)."""
    x, y = _pair(samples, truth)
    j, _ = interval_ranks(x.shape[0], level)
    ordered = np.sort(x, axis=0)
    return (ordered[j - 1] <= y) & (y <= ordered[-j])


def pit(samples: Any, truth: Any) -> np.ndarray:
    """Per element: ``(#{x < y} + (#{x = y} + 1)/2) / (N + 1)``, the truth's mid-rank among the N + 1
    values scaled to (0, 1): 0.5 when every member equals the truth."""
    x, y = _pair(samples, truth)
    below = (x < y).sum(axis=0)
    equal = (x == y).sum(axis=0)
    return (below + (equal + 1) / 2.0) / (x.shape[0] + 1)


def pit_histogram(values: Any, bins: int = 10) -> list[float]:
    """Share of PIT values in each of ``bins`` equal bins of [0, 1] (a calibrated forecast: all 1/bins)."""
    v = np.asarray(values, dtype=np.float64).ravel()
    counts, _ = np.histogram(np.clip(v, 0.0, 1.0), bins=bins, range=(0.0, 1.0))
    return (counts / max(len(v), 1)).tolist()


def calibration_error(pit_values: Any, levels: Any = DEFAULT_LEVELS) -> float:
    """ECE of the quantile levels: mean over ``p`` of ``|share of PIT ≤ p − p|`` (0: calibrated; at
    most 0.5 + max|p − 0.5|)."""
    v = np.asarray(pit_values, dtype=np.float64).ravel()
    if not len(v):
        raise ValueError("calibration_error: no PIT values")
    p = np.asarray(levels, dtype=np.float64)
    observed = (v[None, :] <= p[:, None]).mean(axis=1)
    return float(np.abs(observed - p).mean())


def auroc(scores: Any, labels: Any) -> float | None:
    """Area under the ROC curve of ``scores`` for the binary ``labels`` (Mann–Whitney U with ties
    counted half); None when only one class is present."""
    s = np.asarray(scores, dtype=np.float64).ravel()
    lab = np.asarray(labels).astype(bool).ravel()
    n_pos, n_neg = int(lab.sum()), int((~lab).sum())
    if not n_pos or not n_neg:
        return None
    ranks = _ranks(s)
    return float((ranks[lab].sum() - n_pos * (n_pos + 1) / 2.0) / (n_pos * n_neg))


def error_ranking(uncertainty: Any, errors: Any) -> dict[str, float | None]:
    """How well ``uncertainty`` ranks ``errors``: Spearman's ρ, and the AUROC of the uncertainty for
    "error above the median error" (0.5: no better than chance; None where undefined)."""
    u, e = np.asarray(uncertainty, dtype=np.float64).ravel(), np.asarray(errors, dtype=np.float64).ravel()
    rho = spearman(u, e)
    return {"spearman": None if np.isnan(rho) else rho, "auroc": auroc(u, e > np.median(e))}
