"""Probes from a model's latents to a simulator's exact state (``task=probing``; docs/latent-models.md).

A **ridge probe** is a linear map fit in closed form on training episodes:
``W = (XᵀX + αI)⁻¹ Xᵀ Y`` on latents standardised by the training mean and deviation (a bias
column, not penalised). A continuous variable is read off directly; a discrete one by a ridge
classifier (the same closed form on one-hot targets, argmax of the scores).

Scores on held-out episodes, additive per episode so that the mean over equal-length episodes
is the pooled score and a bootstrap over episodes is its interval:

- ``r2_terms``: ``1 − mean squared error / training variance`` per episode: the out-of-sample R² of the
  probe against predicting the training mean (0 = chance, 1 = exact; negative = worse than the mean);
- ``accuracy``: the share of frames whose class the probe names; chance is the training majority
  class's share (:func:`majority_share`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import numpy as np

from wfeval.utils.parallel import map_blas, one_blas_thread


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
    """Each dimension's mean and deviation, computed so that they do not depend on the latents' scale:
    every dimension is first divided by the power of two at or above its largest magnitude (exact in
    floating point, so unscaled latents give the very same numbers), its statistics taken in float64
    there and scaled back. A dimension whose deviation is at most :data:`CONSTANT` of its largest
    magnitude is constant (deviation 1: it stays 0 after centring). Latents scaled by 1e200 (whose
    squares overflow) or by 1e-15 (below any fixed threshold) so give the same probe as unscaled ones."""
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


#: latents up to this width are fit by solving the penalised normal equations directly (the numbers of every
#: earlier run); wider ones through :class:`RidgePath` (the same solution, ~1e-10 apart, far cheaper)
DIRECT_WIDTH = 512


def _targets(y: np.ndarray, discrete: bool) -> tuple[np.ndarray, np.ndarray | None]:
    """One variable's regression targets: the values as one column, or one indicator column per class."""
    classes = np.unique(y) if discrete else None
    return (y[:, None] if classes is None else (y[:, None] == classes[None, :]).astype(np.float64)), classes


def fit_ridges(z: np.ndarray, ys: np.ndarray, alphas: Sequence[float], discrete: Sequence[bool]) -> list[RidgeProbe]:
    """One closed-form ridge probe per column of ``ys`` (N × variables), each with its own penalty, from
    latents ``z`` (N×D) standardised once. Wide latents share one :class:`RidgePath` (one decomposition
    for every variable); narrow ones solve each variable's penalised normal equations directly."""
    if any(a < 0 for a in alphas):
        raise ValueError(f"probe: alpha must be >= 0, got {min(alphas)}")
    x, mean, scale = _features(z)
    ys = np.asarray(ys, dtype=np.float64).reshape(len(ys), -1)
    if len(ys) != len(x):
        raise ValueError(f"probe: {len(x)} latents but {len(ys)} targets")
    probes = []
    with one_blas_thread():  # a decomposition's library threads wait on each other on a busy machine
        path = RidgePath(x, mean, scale) if x.shape[1] - 1 > DIRECT_WIDTH else None  # the standardisation above
        for j, (alpha, is_discrete) in enumerate(zip(alphas, discrete)):
            targets, classes = _targets(ys[:, j], is_discrete)
            if path is not None:  # wide latents: one decomposition, not a (D+1)² least-squares solve
                weights = path.weights(targets, alpha)
            else:
                penalty = alpha * np.eye(x.shape[1])
                penalty[-1, -1] = 0.0  # the bias is not shrunk
                weights = np.linalg.lstsq(x.T @ x + penalty, x.T @ targets, rcond=None)[0]
            probes.append(RidgeProbe(mean=mean, scale=scale, weights=weights, classes=classes))
    return probes


def fit_ridge(z: np.ndarray, y: np.ndarray, *, alpha: float = 1.0, discrete: bool = False) -> RidgeProbe:
    """The closed-form ridge probe from latents ``z`` (N×D) to one variable ``y`` (N values)."""
    return fit_ridges(z, np.asarray(y, dtype=np.float64).reshape(-1, 1), [alpha], [discrete])[0]


def predict_all(probes: Sequence[RidgeProbe], z: np.ndarray) -> list[np.ndarray]:
    """Every probe's prediction on ``z``; probes fit on the same latents (:func:`fit_ridges`) share one
    standardisation of ``z`` and one product with their weights side by side."""
    if not probes or any(p.mean is not probes[0].mean or p.scale is not probes[0].scale for p in probes):
        return [p.predict(z) for p in probes]
    with one_blas_thread():  # a small product: two threads wait on each other on a busy machine
        scores = probes[0].scores(z) if len(probes) == 1 else RidgeProbe(
            probes[0].mean, probes[0].scale, np.concatenate([p.weights for p in probes], axis=1)).scores(z)
    ends = np.cumsum([p.weights.shape[1] for p in probes])
    return [s[:, 0] if p.classes is None else p.classes[np.argmax(s, axis=1)]
            for p, s in zip(probes, np.split(scores, ends[:-1], axis=1))]


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


def _folds(groups: np.ndarray, folds: int) -> np.ndarray:
    """Each frame's fold: whole episodes (``groups``) dealt round-robin into ``folds`` folds (at least 2)."""
    ids = np.unique(groups)
    fold_of = {g: i % max(2, min(folds, len(ids))) for i, g in enumerate(ids)}
    return np.array([fold_of[g] for g in groups])


class RidgePath:
    """Every ridge penalty's solution on one set of training latents from one decomposition.

    On latents standardised by their own statistics the columns are centred, so the unpenalised bias
    is the targets' mean and the weights are the ridge solution on centred targets; with the
    eigendecomposition ``X Xᵀ = U diag(μ) Uᵀ`` (``N ≤ D``: weights ``Xᵀ U diag(1/(μ+α)) Uᵀ t``) or
    ``Xᵀ X = V diag(λ) Vᵀ`` (``D < N``: ``V diag(1/(λ+α)) Vᵀ Xᵀ t``) each penalty costs a diagonal scaling
    instead of a solve: the solution of the penalised normal equations (to ~1e-10 in tests) for every
    candidate at once, one decomposition per fold, not one (D+1)² solve per penalty, fold and variable."""

    def __init__(self, x: np.ndarray, mean: np.ndarray, scale: np.ndarray):
        """From standardised latents with their bias column (:func:`_features`), their mean and scale."""
        self.mean, self.scale, self.x = mean, scale, x[:, :-1]
        self.dual = self.x.shape[0] <= self.x.shape[1]  # an N×N kernel: weights = Xᵀ U diag Uᵀ t
        values, self.vectors = np.linalg.eigh(self.x @ self.x.T if self.dual else self.x.T @ self.x)
        self.right = self.vectors.T if self.dual else self.vectors.T @ self.x.T
        self.values = np.clip(values, 0.0, None)  # round-off below zero

    def _left(self, a: np.ndarray) -> np.ndarray:
        """``left @ a`` with ``left`` = Xᵀ U (dual) or V: in the dual never formed (a D×N product per fit)."""
        return self.x.T @ (self.vectors @ a) if self.dual else self.vectors @ a

    @classmethod
    def fit(cls, z: np.ndarray) -> "RidgePath":
        return cls(*_features(z))

    def weights(self, targets: np.ndarray, alpha: float) -> np.ndarray:
        """(D + 1) × outputs: the weights of the standardised latents, the bias last."""
        centre = targets.mean(axis=0)
        coefficients = self._left((self.right @ (targets - centre)) / (self.values + float(alpha))[:, None])
        return np.vstack([coefficients, centre[None, :]])

    def project(self, z: np.ndarray) -> np.ndarray:
        """Latents standardised by the path's statistics, times ``left``: M × (the decomposition's rank)."""
        x = (np.asarray(z, dtype=np.float64) - self.mean) / self.scale
        return (x @ self.x.T) @ self.vectors if self.dual else x @ self.vectors

    def projected_scores(self, projected: np.ndarray, targets: np.ndarray, alphas: Sequence[float]):
        """The scores of :meth:`scores` for each penalty of ``alphas`` on latents already :meth:`project`-ed:
        per penalty a diagonal scaling and an M×rank product, never a D-wide one."""
        centre = targets.mean(axis=0)
        right = self.right @ (targets - centre)
        for alpha in alphas:
            yield projected @ (right / (self.values + float(alpha))[:, None]) + centre


def _fold_losses(z: np.ndarray, states: np.ndarray, test: np.ndarray, discrete: Sequence[bool],
                 alphas: Sequence[float]) -> list[list[float] | None]:
    """A fold's held-out loss per variable and penalty (None: a discrete variable with one training class)."""
    path = RidgePath.fit(z[~test])
    held_out = path.project(z[test])  # the held-out latents on the path's basis, once per fold
    out: list[list[float] | None] = []
    for j, is_discrete in enumerate(discrete):
        y_test = states[test, j]
        targets, classes = _targets(states[~test, j], is_discrete)
        out.append(None if is_discrete and len(classes) < 2 else [
            -accuracy(classes[np.argmax(scores, axis=1)], y_test) if is_discrete else float(np.mean(
                (scores[:, 0] - y_test) ** 2)) for scores in path.projected_scores(held_out, targets, alphas)])
    return out


def choose_alphas(z: np.ndarray, states: np.ndarray, groups: np.ndarray, discrete: Sequence[bool], *,
                  alphas: Sequence[float] = ALPHAS, folds: int = 4) -> list[float]:
    """For each column of ``states`` (N × variables; ``discrete`` says which are classes), the ridge
    penalty of ``alphas`` with the best held-out score when whole training episodes (``groups``) are
    left out in ``folds`` folds: mean squared error (continuous) or accuracy (discrete). Probes never
    see the evaluation episodes while their penalty is chosen. One decomposition per fold serves every
    penalty and every variable (:class:`RidgePath`); the folds are fit side by side, one BLAS thread each."""
    states = np.asarray(states, dtype=np.float64).reshape(len(z), -1)
    fold = _folds(groups, folds)
    per_fold = map_blas(lambda f: _fold_losses(z, states, fold == f, discrete, alphas), list(np.unique(fold)))
    chosen = []
    for j in range(len(discrete)):
        best, best_loss = float(alphas[0]), float("inf")
        for a, alpha in enumerate(alphas):
            fold_losses = [losses[j][a] for losses in per_fold if losses[j] is not None]
            if fold_losses and float(np.mean(fold_losses)) < best_loss:  # no fold: never chosen over another
                best, best_loss = float(alpha), float(np.mean(fold_losses))
        chosen.append(best)
    return chosen


def choose_alpha(z: np.ndarray, y: np.ndarray, groups: np.ndarray, *, discrete: bool = False,
                 alphas: Sequence[float] = ALPHAS, folds: int = 4) -> float:
    """:func:`choose_alphas` for one variable ``y``."""
    return choose_alphas(z, np.asarray(y, dtype=np.float64).reshape(-1, 1), groups, [discrete],
                         alphas=alphas, folds=folds)[0]
