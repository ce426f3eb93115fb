"""Reward-prediction formulas: a model's predicted rewards against the simulator's, per step and over a
horizon, and the mean-reward predictor that is their chance level.

* ``discounted_return(rewards, discount)``: ``Σ_t γ^t r_t`` (t from 0);
* ``step_reward_error(true, predicted)``: mean over steps of ``(r̂_t − r_t)²`` (squared: the mean reward
  is then the best constant predictor, so chance is a floor a model must beat to know anything);
* ``horizon_return_error(true, predicted, discount)``: ``|Σ γ^t r̂_t − Σ γ^t r_t|``;
* ``mean_reward_chance(episodes, error, discount)``: ``error`` of the constant predictor equal to the
  mean true reward over every step of every episode, per episode, averaged.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

__all__ = ["discounted_return", "step_reward_error", "horizon_return_error", "mean_reward_chance"]


def _pair(true: Any, predicted: Any) -> tuple[np.ndarray, np.ndarray]:
    t, p = np.asarray(true, np.float64).ravel(), np.asarray(predicted, np.float64).ravel()
    if t.shape != p.shape or not len(t):
        raise ValueError(f"{len(p)} predicted rewards for {len(t)} true ones: expected as many, at least one")
    return t, p


def discounted_return(rewards: Any, discount: float = 1.0) -> float:
    r = np.asarray(rewards, np.float64).ravel()
    return float((r * float(discount) ** np.arange(len(r))).sum())


def step_reward_error(true: Any, predicted: Any, discount: float = 1.0) -> float:
    t, p = _pair(true, predicted)
    return float(((p - t) ** 2).mean())


def horizon_return_error(true: Any, predicted: Any, discount: float = 1.0) -> float:
    t, p = _pair(true, predicted)
    return abs(discounted_return(p, discount) - discounted_return(t, discount))


def mean_reward_chance(episodes: Sequence[Any], error: Callable[..., float], discount: float = 1.0) -> float:
    """Mean over episodes of ``error(true, constant mean reward, discount)``."""
    trues = [np.asarray(e, np.float64).ravel() for e in episodes]
    if not trues or not all(len(t) for t in trues):
        raise ValueError("mean_reward_chance: every episode needs at least one reward")
    mean = float(np.concatenate(trues).mean())
    return float(np.mean([error(t, np.full(len(t), mean), discount) for t in trues]))
