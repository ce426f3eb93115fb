"""Controllability formulas: does the generated video depend on the actions, and can they be read off it?

* ``action_sensitivity`` (Genie's ΔtPSNR, Bruce et al. 2024): the PSNR against the reference of the
  video generated with the true actions minus the mean PSNR of the videos generated from the same
  start with counterfactual actions, per frame (each PSNR capped at ``max_db`` first), then averaged
  over frames. A model that ignores its actions produces the same video either way: exactly 0.
* ``action_accuracy``: the share of transitions whose recovered action equals the true one;
  ``majority_rate``: the share of the most frequent true action (the best constant guess: chance);
* ``action_r2`` (continuous actions): ``1 − MSE_e / Var_e`` per action element, averaged over the
  elements, with ``Var_e`` a fixed variance (the inverse-dynamics model's training actions'): 0 for
  a constant guess at the mean, 1 for exact recovery.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from wfeval.functional.reference import psnr

__all__ = ["action_sensitivity", "action_accuracy", "majority_rate", "action_r2"]


def action_sensitivity(generated: Any, counterfactuals: Sequence[Any], target: Any, *, data_range: float = 255.0,
                       max_db: float = 100.0, skip: int = 0) -> dict[str, Any]:
    """``value`` (dB), the per-frame difference ``per_frame``, ``psnr_true`` and ``psnr_counterfactual``
    (one per counterfactual video) over frames ``skip`` … T−1 of ``T×H×W×C`` videos of one shape."""
    if not counterfactuals:
        raise ValueError("action_sensitivity needs at least one counterfactual video")
    generated, target = np.asarray(generated)[skip:], np.asarray(target)[skip:]
    if not len(generated):
        raise ValueError(f"no frame left to compare after skip={skip}")
    true_curve = np.minimum(psnr(generated, target, data_range=data_range, per_frame=True), max_db)
    curves = []
    for k, video in enumerate(counterfactuals):
        video = np.asarray(video)[skip:]
        if video.shape != generated.shape:
            raise ValueError(f"counterfactual video {k} has shape {video.shape}, the generated one {generated.shape}")
        curves.append(np.minimum(psnr(video, target, data_range=data_range, per_frame=True), max_db))
    delta = np.mean([true_curve - c for c in curves], axis=0)  # per counterfactual first: equal videos give exactly 0
    return {"value": float(delta.mean()), "per_frame": delta.tolist(), "psnr_true": float(true_curve.mean()),
            "psnr_counterfactual": [float(c.mean()) for c in curves]}


def action_accuracy(predicted: Any, actions: Any) -> float:
    predicted, actions = np.asarray(predicted).reshape(-1), np.asarray(actions).reshape(-1)
    if predicted.shape != actions.shape or not len(actions):
        raise ValueError(f"action_accuracy: {predicted.shape} predictions for {actions.shape} actions")
    return float((predicted == actions).mean())


def majority_rate(actions: Any) -> float:
    """The share of the most frequent action id (the accuracy of always guessing it)."""
    actions = np.asarray(actions, dtype=np.int64).reshape(-1)
    if not len(actions):
        raise ValueError("majority_rate of no actions")
    return float(np.bincount(actions - actions.min()).max() / len(actions))


def action_r2(predicted: Any, actions: Any, variance: Any) -> float:
    """Mean over action elements of ``1 − mean((predicted − actions)²) / variance`` (``N×D`` arrays)."""
    predicted = np.asarray(predicted, np.float64).reshape(len(predicted), -1)
    actions = np.asarray(actions, np.float64).reshape(len(actions), -1)
    if predicted.shape != actions.shape or not len(actions):
        raise ValueError(f"action_r2: {predicted.shape} predictions for {actions.shape} actions")
    variance = np.broadcast_to(np.asarray(variance, np.float64), actions.shape[1:])
    if not (variance > 0).all():
        raise ValueError("action_r2: the variance of every action element must be > 0")
    return float(np.mean(1.0 - np.mean((predicted - actions) ** 2, axis=0) / variance))
