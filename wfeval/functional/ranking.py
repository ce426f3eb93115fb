"""Policy-evaluation formulas: do the returns inside a world model rank policies as the real world does?

Inputs are ``S×K`` arrays of returns (S starts × K policies), one inside the model and one in the
true simulator, from the same starts (WorldArena's "world model as policy evaluator").

* ``spearman(x, y)``: Spearman's rank correlation, ties given their average rank (as
  ``scipy.stats.spearmanr``); when either side is constant the correlation is undefined and
  ``constant`` is returned (the metric uses 0: a model whose returns tie for every policy ranks
  them no better than chance);
* ``policy_rank_correlation(model, true)``: ``spearman`` of the per-policy mean returns over starts;
* ``bootstrap_rank_correlation``: its percentile interval over starts resampled with replacement;
* ``return_error(model, true)``: the mean absolute difference of the returns, per start (averaged
  over policies).
"""

from __future__ import annotations

from typing import Any

import numpy as np

__all__ = ["spearman", "policy_rank_correlation", "bootstrap_rank_correlation", "return_error"]


def _ranks(x: np.ndarray) -> np.ndarray:
    """Ranks 1…n, ties given the mean of the ranks they span."""
    order = np.argsort(x, kind="stable")
    ranks = np.empty(len(x), np.float64)
    sorted_x = x[order]
    i = 0
    while i < len(x):
        j = i
        while j + 1 < len(x) and sorted_x[j + 1] == sorted_x[i]:
            j += 1
        ranks[order[i:j + 1]] = (i + j) / 2.0 + 1.0
        i = j + 1
    return ranks


def spearman(x: Any, y: Any, constant: float = float("nan")) -> float:
    x, y = np.asarray(x, np.float64).reshape(-1), np.asarray(y, np.float64).reshape(-1)
    if x.shape != y.shape or len(x) < 2:
        raise ValueError(f"spearman needs two series of the same length >= 2, got {x.shape} and {y.shape}")
    if not (np.isfinite(x).all() and np.isfinite(y).all()):
        raise ValueError("spearman: non-finite values")
    rx, ry = _ranks(x), _ranks(y)
    dx, dy = rx - rx.mean(), ry - ry.mean()
    norm = np.sqrt((dx * dx).sum() * (dy * dy).sum())
    if norm == 0:
        return float(constant)
    return float(np.clip((dx * dy).sum() / norm, -1.0, 1.0))


def _check(model: Any, true: Any) -> tuple[np.ndarray, np.ndarray]:
    model, true = np.asarray(model, np.float64), np.asarray(true, np.float64)
    if model.shape != true.shape or model.ndim != 2 or model.shape[0] < 1 or model.shape[1] < 2:
        raise ValueError(f"returns must be two S×K arrays (S >= 1 starts, K >= 2 policies) of one shape, got "
                         f"{model.shape} and {true.shape}")
    return model, true


def policy_rank_correlation(model: Any, true: Any, constant: float = 0.0) -> float:
    model, true = _check(model, true)
    return spearman(model.mean(axis=0), true.mean(axis=0), constant)


def bootstrap_rank_correlation(model: Any, true: Any, *, n_resamples: int = 1000, confidence: float = 0.95,
                               seed: int = 0, constant: float = 0.0) -> tuple[float, float]:
    """Percentile interval of :func:`policy_rank_correlation` over starts drawn with replacement."""
    model, true = _check(model, true)
    rng = np.random.default_rng(seed)
    starts = len(model)
    values = np.array([policy_rank_correlation(model[i], true[i], constant)
                       for i in (rng.integers(0, starts, starts) for _ in range(n_resamples))])
    alpha = (1.0 - confidence) / 2.0
    return float(np.quantile(values, alpha)), float(np.quantile(values, 1.0 - alpha))


def return_error(model: Any, true: Any) -> np.ndarray:
    """Per start, the mean over policies of |model return − true return|."""
    model, true = _check(model, true)
    return np.abs(model - true).mean(axis=1)
