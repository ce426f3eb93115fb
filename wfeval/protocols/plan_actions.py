"""What the planner (:mod:`wfeval.protocols.planner`) chooses from: action ids, or a bounded
continuous set, and how it draws and refits plans of action vectors.

An environment with a continuous action space (``env.action_space``, a bounded
:class:`~wfeval.api.ActionSpace`: Push-T's target positions) gets plans of action vectors (N×H×d):
the starting distribution is a Gaussian centred on the environment's ``hold_action`` (the action
that keeps things as they are; else the middle of the bounds) with a standard deviation of
``spread`` × the bounds' range, each step kept from the previous one with ``p_repeat`` (sticky, as
the discrete plans); ``cem`` refits that Gaussian, per step and element, to the elites of each
iteration (as the CEM planners over continuous actions of PETS and DINO-WM do), its standard
deviation kept above :data:`MIN_STD` of the range. Every plan is clipped to the bounds.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

MIN_STD = 0.02  # continuous CEM: the Gaussian's std never falls below this share of the bounds' range


class Continuous:
    """A continuous action set to plan over: per-element bounds and the Gaussian's starting mean."""

    def __init__(self, low: Sequence[float], high: Sequence[float], shape: tuple[int, ...], center: Any = None):
        self.low, self.high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
        self.shape = tuple(shape)
        self.center = (self.low + self.high) / 2 if center is None else \
            np.clip(np.asarray(center, dtype=np.float64).reshape(-1), self.low, self.high)


def action_set(env: Any) -> Any:
    """What a planner chooses from in ``env``: ``n_actions`` ids, or a :class:`Continuous` set for an
    environment that declares a continuous ``action_space`` (bounded: the plans are drawn within it)."""
    space = getattr(env, "action_space", None)
    if space is None or not space.is_continuous:
        return int(env.n_actions)
    found = space.bounds()
    if found is None:
        raise ValueError(f"the planner draws continuous actions within the action space's bounds, and this one "
                         f"declares none ({space.describe()})")
    hold = getattr(env, "hold_action", None)
    return Continuous(found[0], found[1], space.shape, hold() if callable(hold) else hold)


def start_gaussian(space: Continuous, horizon: int, spread: float) -> tuple[np.ndarray, np.ndarray]:
    """(mean, std), each H×d: the hold action at every step, ``spread`` × the range."""
    mean = np.repeat(space.center[None], horizon, axis=0)
    return mean, np.full_like(mean, spread) * (space.high - space.low)


def gaussian_plans(rng: np.random.Generator, space: Continuous, fit: tuple[np.ndarray, np.ndarray],
                   candidates: int, p_repeat: float, sticky: bool) -> np.ndarray:
    """N×H×d plans drawn from the Gaussian ``fit`` (steps repeated with ``p_repeat`` when ``sticky``), clipped."""
    mean, std = fit
    plans = mean[None] + std[None] * rng.standard_normal((candidates, *mean.shape))
    if sticky:
        keep = rng.random((candidates, mean.shape[0])) < p_repeat
        for t in range(1, mean.shape[0]):
            plans[:, t] = np.where(keep[:, t, None], plans[:, t - 1], plans[:, t])
    return np.clip(plans, space.low, space.high)


def refit_gaussian(space: Continuous, elite: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The Gaussian of the elite plans (E×H×d), its std kept above :data:`MIN_STD` of the range."""
    return elite.mean(axis=0), np.maximum(elite.std(axis=0), MIN_STD * (space.high - space.low))


def plan_actions(plan: np.ndarray) -> list[Any]:
    """A plan as the model and the environment take it: int ids, or lists of floats (continuous)."""
    if plan.ndim == 1:
        return [int(a) for a in plan]
    return [[float(v) for v in a] for a in plan]


def candidates(tried: list[tuple[np.ndarray, np.ndarray, np.ndarray]]) -> dict[str, np.ndarray]:
    """Every plan one search imagined (N×H), its imagined cost per step (N×H), its score (N) and the
    iteration that drew it (N)."""
    return {"plans": np.concatenate([p for p, _, _ in tried]), "costs": np.concatenate([c for _, c, _ in tried]),
            "scores": np.concatenate([s for _, _, s in tried]),
            "iteration": np.concatenate([np.full(len(p), it) for it, (p, _, _) in enumerate(tried)])}
