"""Probes from a model's latents to a simulator's exact state (``task=probing``; docs/latent-models.md).

A **ridge probe** is a linear map fit in closed form on training episodes:
``W = (XᵀX + αI)⁻¹ Xᵀ Y`` on latents standardised by the training mean and deviation (a bias
column, not penalised). A continuous variable is read off directly; a discrete one by a ridge
classifier (the same closed form on one-hot targets, argmax of the scores).

Scores on held-out episodes, additive per episode so that the mean over equal-length episodes
is the pooled score and a bootstrap over episodes is its interval:

- ``r2_terms``: ``1 − mean squared error / training variance`` per episode: the out-of-sample R²
  of the probe against predicting the training mean (0 = chance, 1 = exact; negative = worse
  than the training mean);
- ``accuracy``: the share of frames whose class the probe names; chance is the training
  majority class's share (:func:`majority_share`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np


@dataclass(frozen=True)
class RidgeProbe:
    """A fitted ridge probe: ``predict(z)`` → continuous values, or class labels for a discrete target."""

    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray  # (D + 1) × outputs: the last row is the bias
    classes: np.ndarray | None = None  # discrete: the label of each output column

    def scores(self, z: np.ndarray) -> np.ndarray:
        x = (np.asarray(z, dtype=np.float64) - self.mean) / self.scale
        return np.concatenate([x, np.ones((len(x), 1))], axis=1) @ self.weights

    def predict(self, z: np.ndarray) -> np.ndarray:
        s = self.scores(z)
        if self.classes is None:
            return s[:, 0]
        return self.classes[np.argmax(s, axis=1)]


#: a latent dimension whose deviation is at most this share of its largest magnitude is constant
CONSTANT = 1e-12


def standardise(z: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each dimension's mean and deviation, computed so that they do not depend on the latents'
    scale: every dimension is first divided by the power of two at or above its largest magnitude
    (exact in floating point, so unscaled latents give the very same numbers), its statistics taken
    in float64 there and scaled back. A dimension whose deviation is at most :data:`CONSTANT` of its
    largest magnitude is constant (deviation 1: it stays 0 after centring). Latents scaled by 1e200
    (whose squares overflow) or by 1e-15 (below any fixed threshold) hold the same information as
    unscaled ones, and so give the same probe."""
    peak = np.max(np.abs(z), axis=0)
    unit = np.ldexp(1.0, np.frexp(np.where(peak > 0, peak, 1.0))[1])  # a power of two >= peak
    unit_z = z / unit
    mean, deviation = unit_z.mean(axis=0), unit_z.std(axis=0)
    if not (np.isfinite(mean).all() and np.isfinite(deviation).all()):
        raise ValueError("probe: the latents' mean or deviation is not finite")
    deviation = np.where(deviation > CONSTANT, deviation, 1.0)
    return mean * unit, deviation * unit


def _features(z: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    z = np.asarray(z)
    if z.dtype.kind not in "fiu":
        raise ValueError(f"probe: latents must be real numbers, got {z.dtype}")
    z = z.astype(np.float64, copy=False)
    if z.ndim != 2 or len(z) < 2:
        raise ValueError(f"probe: latents must be N×D with N >= 2, got shape {z.shape}")
    if not np.isfinite(z).all():
        raise ValueError("probe: the latents hold NaN or infinite values")
    mean, scale = standardise(z)
    x = (z - mean) / scale
    return np.concatenate([x, np.ones((len(x), 1))], axis=1), mean, scale


def fit_ridge(z: np.ndarray, y: np.ndarray, *, alpha: float = 1.0, discrete: bool = False) -> RidgeProbe:
    """The closed-form ridge probe from latents ``z`` (N×D) to one variable ``y`` (N values)."""
    if alpha < 0:
        raise ValueError(f"probe: alpha must be >= 0, got {alpha}")
    x, mean, scale = _features(z)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if len(y) != len(x):
        raise ValueError(f"probe: {len(x)} latents but {len(y)} targets")
    classes = None
    if discrete:
        classes = np.unique(y)
        targets = (y[:, None] == classes[None, :]).astype(np.float64)
    else:
        targets = y[:, None]
    penalty = alpha * np.eye(x.shape[1])
    penalty[-1, -1] = 0.0  # the bias is not shrunk
    weights = np.linalg.lstsq(x.T @ x + penalty, x.T @ targets, rcond=None)[0]
    return RidgeProbe(mean=mean, scale=scale, weights=weights, classes=classes)


def r2_term(predicted: np.ndarray, truth: np.ndarray, train_variance: float) -> float:
    """One episode's ``1 − MSE / training variance`` (NaN when the training variance is 0)."""
    if not train_variance > 0:
        return float("nan")
    err = np.asarray(predicted, dtype=np.float64) - np.asarray(truth, dtype=np.float64)
    return float(1.0 - np.mean(err * err) / train_variance)


def accuracy(predicted: np.ndarray, truth: np.ndarray) -> float:
    return float(np.mean(np.asarray(predicted) == np.asarray(truth)))


def majority_share(train_values: Sequence[float], truth: np.ndarray) -> float:
    """Chance accuracy: the share of ``truth`` equal to the training set's most frequent value."""
    values, counts = np.unique(np.asarray(train_values), return_counts=True)
    return float(np.mean(np.asarray(truth) == values[np.argmax(counts)]))


ALPHAS = (1e-3, 1e-2, 1e-1, 1.0, 10.0, 100.0, 1e3, 1e4)


def choose_alpha(z: np.ndarray, y: np.ndarray, groups: np.ndarray, *, discrete: bool = False,
                 alphas: Sequence[float] = ALPHAS, folds: int = 4) -> float:
    """The ridge penalty of ``alphas`` with the best held-out score when whole training episodes
    (``groups``) are left out in ``folds`` folds: mean squared error (continuous) or accuracy (discrete).
    Probes never see the evaluation episodes while their penalty is chosen."""
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    ids = np.unique(groups)
    fold_of = {g: i % max(2, min(folds, len(ids))) for i, g in enumerate(ids)}
    fold = np.array([fold_of[g] for g in groups])
    best, best_loss = float(alphas[0]), float("inf")
    for alpha in alphas:
        losses = []
        for f in np.unique(fold):
            train, test = fold != f, fold == f
            if len(np.unique(y[train])) < 2 and discrete:
                continue
            probe = fit_ridge(z[train], y[train], alpha=float(alpha), discrete=discrete)
            predicted = probe.predict(z[test])
            losses.append(-accuracy(predicted, y[test]) if discrete else float(np.mean((predicted - y[test]) ** 2)))
        loss = float(np.mean(losses)) if losses else float("inf")
        if loss < best_loss:
            best, best_loss = float(alpha), loss
    return best
