"""Class probes and their scores as AtariARI reads them (Anand et al. 2019; ``protocol.probe=atariari``,
docs/latent-models.md#the-atariari-protocol).

- :func:`fit_logistic`: a linear classifier per variable, multinomial logistic regression on latents
  standardised by the training statistics (:func:`wfeval.functional.probing.standardise`), minimising
  the mean cross-entropy plus ``penalty/2 · ‖W‖²`` (the bias is not penalised) to convergence with
  L-BFGS. Its classes are the values seen in training (a RAM byte: up to 256); a value never seen
  cannot be named, as an unpenalised bias drives its logit to −∞.
- :func:`weighted_f1`: the F1 score of each true class, averaged weighted by its support (what
  AtariARI reports: scikit-learn's ``f1_score(average="weighted")``); :func:`f1_counts` and
  :func:`pooled_f1` give the same score over several episodes from additive per-class counts.
- :func:`entropy_nats`: the entropy of a variable's values (natural logarithm); AtariARI drops a
  variable whose entropy is below a threshold (near-constant).
- :func:`frame_digests`: one digest per frame, to drop the evaluation frames equal to a training one.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Iterable, Mapping, Sequence

import numpy as np

from wfeval.functional.probing import standardise

PENALTIES = (1e-4, 1e-3, 1e-2, 1e-1)  # chosen per variable by the validation episodes' weighted F1


@dataclass(frozen=True)
class LogisticProbe:
    mean: np.ndarray
    scale: np.ndarray
    weights: np.ndarray  # D × C
    bias: np.ndarray  # C
    classes: np.ndarray  # the label of each column

    def logits(self, z: np.ndarray) -> np.ndarray:
        return ((np.asarray(z, dtype=np.float64) - self.mean) / self.scale) @ self.weights + self.bias

    def probabilities(self, z: np.ndarray) -> np.ndarray:
        return _softmax(self.logits(z))

    def predict(self, z: np.ndarray) -> np.ndarray:
        return self.classes[np.argmax(self.logits(z), axis=1)]


def _softmax(logits: np.ndarray) -> np.ndarray:
    shifted = np.exp(logits - logits.max(axis=1, keepdims=True))
    return shifted / shifted.sum(axis=1, keepdims=True)


def logistic_objective(x: np.ndarray, onehot: np.ndarray, weights: np.ndarray, bias: np.ndarray,
                       penalty: float) -> tuple[float, np.ndarray, np.ndarray]:
    """(mean cross-entropy + penalty/2·‖W‖², its gradient in W, in the bias) on standardised ``x``."""
    logits = x @ weights + bias
    top = logits.max(axis=1, keepdims=True)
    log_norm = top[:, 0] + np.log(np.exp(logits - top).sum(axis=1))
    n = len(x)
    loss = float(np.mean(log_norm - (logits * onehot).sum(axis=1)) + 0.5 * penalty * np.sum(weights * weights))
    residual = (_softmax(logits) - onehot) / n
    return loss, x.T @ residual + penalty * weights, residual.sum(axis=0)


def fit_logistic(z: np.ndarray, y: np.ndarray, *, penalty: float = 1e-3, max_iter: int = 1000) -> LogisticProbe:
    """The multinomial logistic probe from latents ``z`` (N×D) to the classes ``y`` (N values)."""
    from scipy.optimize import minimize

    if penalty <= 0:
        raise ValueError(f"probe: the logistic penalty must be > 0, got {penalty}")
    z = np.asarray(z, dtype=np.float64)
    y = np.asarray(y, dtype=np.float64).reshape(-1)
    if z.ndim != 2 or len(z) != len(y) or len(z) < 2:
        raise ValueError(f"probe: latents {z.shape} and {len(y)} labels; expected N×D latents, one label each, N >= 2")
    if not np.isfinite(z).all():
        raise ValueError("probe: the latents hold NaN or infinite values")
    mean, scale = standardise(z)
    x = (z - mean) / scale
    classes, index = np.unique(y, return_inverse=True)
    onehot = np.eye(len(classes))[index]
    d, c = x.shape[1], len(classes)
    if c == 1:  # one class seen: it is always named
        return LogisticProbe(mean, scale, np.zeros((d, 1)), np.zeros(1), classes)
    start = np.concatenate([np.zeros(d * c), np.log(onehot.mean(axis=0))])

    def objective(theta: np.ndarray) -> tuple[float, np.ndarray]:
        loss, grad_w, grad_b = logistic_objective(x, onehot, theta[:d * c].reshape(d, c), theta[d * c:], penalty)
        return loss, np.concatenate([grad_w.ravel(), grad_b])

    found = minimize(objective, start, jac=True, method="L-BFGS-B",
                     options={"maxiter": max_iter, "gtol": 1e-7, "ftol": 1e-13, "maxcor": 20})
    theta = found.x
    bias = theta[d * c:]
    return LogisticProbe(mean, scale, theta[:d * c].reshape(d, c), bias - bias.mean(), classes)


def f1_counts(truth: Sequence[float], predicted: Sequence[float]) -> dict[float, list[int]]:
    """Per class of ``truth`` or ``predicted``: ``[true positives, false positives, false negatives]``."""
    truth, predicted = np.asarray(truth), np.asarray(predicted)
    out = {}
    for label in np.union1d(truth, predicted):
        hit = (truth == label) & (predicted == label)
        out[float(label)] = [int(hit.sum()), int(((predicted == label) & ~hit).sum()),
                             int(((truth == label) & ~hit).sum())]
    return out


def pooled_f1(counts: Iterable[Mapping[float, Sequence[int]]]) -> float:
    """The support-weighted F1 of the summed per-class counts (several episodes scored as one set)."""
    total: dict[float, np.ndarray] = {}
    for one in counts:
        for label, c in one.items():
            total[float(label)] = total.get(float(label), np.zeros(3, dtype=np.int64)) + np.asarray(c, dtype=np.int64)
    support = {label: c[0] + c[2] for label, c in total.items()}
    n = sum(support.values())
    if not n:
        return float("nan")
    score = sum(support[label] * 2 * c[0] / (2 * c[0] + c[1] + c[2]) for label, c in total.items() if support[label])
    return float(score / n)


def weighted_f1(truth: Sequence[float], predicted: Sequence[float]) -> float:
    """F1 per true class (``2·TP / (2·TP + FP + FN)``), averaged weighted by the class's share of ``truth``."""
    return pooled_f1([f1_counts(truth, predicted)])


def entropy_nats(values: Sequence[float]) -> float:
    _, counts = np.unique(np.asarray(values), return_counts=True)
    p = counts / counts.sum()
    return float(max(0.0, -(p * np.log(p)).sum()))  # a constant: 0, not -0


def frame_digests(frames: np.ndarray) -> list[str]:
    """The sha1 of each frame's bytes (with its shape): equal frames, equal digests."""
    frames = np.ascontiguousarray(frames)
    head = repr(frames.shape[1:]).encode() + frames.dtype.str.encode()
    return [hashlib.sha1(head + frame.tobytes()).hexdigest() for frame in frames]


def choose_penalty(z_train: np.ndarray, y_train: np.ndarray, z_val: np.ndarray, y_val: np.ndarray,
                   penalties: Sequence[float] = PENALTIES) -> tuple[float, LogisticProbe]:
    """The penalty of ``penalties`` whose probe (fit on the training frames) has the best weighted F1 on
    the validation frames (the first on ties), and that probe."""
    best: tuple[float, float, LogisticProbe] | None = None
    for penalty in penalties:
        probe = fit_logistic(z_train, y_train, penalty=penalty)
        score = weighted_f1(y_val, probe.predict(z_val))
        if best is None or score > best[0]:
            best = (score, float(penalty), probe)
    assert best is not None
    return best[1], best[2]
