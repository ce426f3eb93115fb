"""The planner of ``protocol=planning``: candidate plans imagined with the model, the best one kept.

``random_shooting`` proposes sticky random plans once; ``cem`` (cross-entropy method) refines
per-step action distributions over ``iterations``. :meth:`Planner.plan_many` plans for several
samples at once: each sample draws its candidates from its own generator, in the order
:meth:`Planner.plan` draws them, and the candidates of **all** samples are imagined in one
``step_many`` call per iteration (one batched forward pass for a batched model), then scored
per sample. A sample whose imagination fails (the model raises or returns malformed frames)
gets its exception in place of a plan; the others go on.

An environment with a continuous action space (Push-T) gets plans of action vectors drawn from a
Gaussian that ``cem`` refits (``spread``: its starting width; :mod:`wfeval.protocols.plan_actions`).
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from wfeval.models.protocol import check_step_output, step_many
from wfeval.protocols.plan_actions import (Continuous, action_set, candidates, gaussian_plans, plan_actions,
                                           refit_gaussian, start_gaussian)

METHODS = ("random_shooting", "cem")
TIME_PENALTY_PX = 0.5  # per imagined step: among plans that get as close, the earlier one wins

Score = Callable[[np.ndarray], np.ndarray]  # imagined frames N×H×h×w×3 -> pixels to the goal, N×H
#: per sample, its candidate plans N×H -> (costs N×H, the first imagined step of each plan) or the exception
Imagine = Callable[[dict[int, np.ndarray]], dict[int, Any]]


class Planner:
    def __init__(self, method: str = "random_shooting", candidates: int = 64, horizon: int = 6,
                 iterations: int = 3, elites: int = 8, p_repeat: float = 0.6, seed: int = 0, spread: float = 0.25):
        if method not in METHODS:
            raise ValueError(f"method {method!r} is not one of {', '.join(METHODS)}")
        if candidates < 1 or horizon < 1 or iterations < 1 or not 1 <= elites <= candidates:
            raise ValueError("need candidates >= 1, horizon >= 1, iterations >= 1 and 1 <= elites <= candidates")
        if not 0.0 <= p_repeat <= 1.0:
            raise ValueError(f"p_repeat must be in [0, 1], got {p_repeat}")
        if not spread > 0.0:
            raise ValueError(f"spread must be > 0 (a share of a continuous action's range), got {spread}")
        self.method, self.candidates, self.horizon = method, int(candidates), int(horizon)
        self.iterations, self.elites = int(iterations), int(elites)
        self.p_repeat, self.seed, self.spread = float(p_repeat), int(seed), float(spread)

    def _sticky(self, rng: np.random.Generator, n_actions: int, horizon: int) -> np.ndarray:
        plans = rng.integers(0, n_actions, size=(self.candidates, horizon))
        keep = rng.random((self.candidates, horizon)) < self.p_repeat
        for t in range(1, horizon):
            plans[:, t] = np.where(keep[:, t], plans[:, t - 1], plans[:, t])
        return plans

    def _propose(self, rng: np.random.Generator, n_actions: Any, horizon: int, it: int,
                 probs: Any) -> np.ndarray:
        if isinstance(n_actions, Continuous):
            return gaussian_plans(rng, n_actions, probs, self.candidates, self.p_repeat, sticky=not (self.method == "cem" and it))
        if self.method == "cem" and it:
            return np.stack([rng.choice(n_actions, size=self.candidates, p=probs[t]) for t in range(horizon)], 1)
        return self._sticky(rng, n_actions, horizon)

    def _start(self, n_actions: Any, horizon: int) -> Any:
        """The search's starting distribution: uniform ids, or a Gaussian (mean, std) per step and element."""
        if isinstance(n_actions, Continuous):
            return start_gaussian(n_actions, horizon, self.spread)
        return np.full((horizon, n_actions), 1.0 / n_actions)

    def _refit(self, n_actions: Any, elite: np.ndarray, horizon: int) -> Any:
        if isinstance(n_actions, Continuous):
            return refit_gaussian(n_actions, elite)
        counts = np.stack([np.bincount(elite[:, t], minlength=n_actions) for t in range(horizon)])
        return 0.1 / n_actions + 0.9 * counts / self.elites

    def plan(self, model: Any, state: Any, n_actions: Any, score: Score, rng: np.random.Generator,
             horizon: int | None = None) -> dict[str, Any]:
        """The best plan found: ``actions``, ``score``, ``first_frame`` (its imagined next frame), ``imagined``."""
        best = self.plan_many(model, [state], [n_actions], [score], [rng], [horizon])[0]
        if isinstance(best, BaseException):
            raise best
        return best

    def plan_many(self, model: Any, states: Sequence[Any], n_actions: Sequence[Any], scores: Sequence[Score],
                  rngs: Sequence[np.random.Generator], horizons: Sequence[int | None]) -> list[Any]:
        """:meth:`plan` for each sample (the same plans, draws and scores), all imagined together;
        a sample whose imagination failed gets the exception instead of its plan."""
        horizon = self.horizons(horizons)
        who = str(getattr(model, "name", "") or type(model).__name__)

        def imagine(plans: dict[int, np.ndarray]) -> dict[int, Any]:
            out: dict[int, Any] = {}
            for i, outs in _imagine(model, {i: states[i] for i in plans}, plans).items():
                try:
                    if isinstance(outs, BaseException):
                        raise outs
                    frames = np.stack([check_step_output(o, horizon[i], who, copy=False) for o in outs])  # N×H×h×w×3
                    out[i] = (scores[i](frames), frames[:, 0])  # N×H pixels to the goal; the first imagined frames
                except TimeoutError:
                    raise
                except Exception as exc:  # this sample's imagination failed: its outcome
                    out[i] = exc
            return out

        return [b if isinstance(b, BaseException) else {**{k: v for k, v in b.items() if k != "first"},
                                                        "first_frame": b["first"]}
                for b in self.search(imagine, n_actions, rngs, horizons, TIME_PENALTY_PX)]

    def horizons(self, horizons: Sequence[int | None]) -> list[int]:
        """Each sample's plan length: the planner's horizon, or fewer where fewer real steps are left."""
        return [min(self.horizon, h or self.horizon) for h in horizons]

    def search(self, imagine: Imagine, n_actions: Sequence[Any], rngs: Sequence[np.random.Generator],
               horizons: Sequence[int | None], penalty: float) -> list[Any]:
        """The search shared by every space: per iteration, each live sample's candidates (drawn from its
        own generator), all imagined by one ``imagine`` call, scored ``min_t(cost_t + penalty × t)``
        (among plans that get as close, the earlier one wins); ``best["first"]`` is what ``imagine``
        returned for the best plan's first step, ``best["candidates"]`` every plan imagined (N×H, all
        iterations; the first iteration's are the random draws) with its imagined costs, score and iteration, for the
        plan audit (:mod:`wfeval.protocols.plan_audit`). A sample whose imagination failed gets the exception."""
        k = len(n_actions)
        horizon = self.horizons(horizons)
        best: list[Any] = [{"score": np.inf} for _ in range(k)]
        imagined = [0] * k
        probs = [self._start(n_actions[i], horizon[i]) for i in range(k)]
        tried: list[list[tuple[np.ndarray, np.ndarray, np.ndarray]]] = [[] for _ in range(k)]
        for it in range(self.iterations if self.method == "cem" else 1):
            live = [i for i in range(k) if not isinstance(best[i], BaseException)]
            plans = {i: self._propose(rngs[i], n_actions[i], horizon[i], it, probs[i]) for i in live}
            for i, got in imagine(plans).items():
                if isinstance(got, BaseException):
                    best[i] = got
                    continue
                dist, firsts = got
                total = (np.asarray(dist, dtype=np.float64) + penalty * np.arange(1, horizon[i] + 1)).min(axis=1)
                imagined[i] += plans[i].size
                tried[i].append((plans[i], np.asarray(dist, dtype=np.float64), total))
                j = int(np.argmin(total))
                if total[j] < best[i]["score"]:
                    best[i] = {"actions": plan_actions(plans[i][j]), "score": float(total[j]), "first": firsts[j]}
                if self.method == "cem":
                    elite = plans[i][np.argsort(total, kind="stable")[:self.elites]]
                    probs[i] = self._refit(n_actions[i], elite, horizon[i])
        return [b if isinstance(b, BaseException) else {**b, "imagined": imagined[i], "candidates": candidates(tried[i])}
                for i, b in enumerate(best)]


def _imagine(model: Any, states: dict[int, Any], plans: dict[int, np.ndarray]) -> dict[int, Any]:
    """Per sample, the model's step outputs for its candidate plans: one ``step_many`` for every
    candidate of every sample; if that call fails, one call per sample (so a failure stays that
    sample's: its exception in place of its outputs)."""
    order = list(states)
    flat_states = [states[i] for i in order for _ in range(len(plans[i]))]
    flat_actions = [plan_actions(p) for i in order for p in plans[i]]
    try:
        outs = step_many(model, flat_states, flat_actions)
    except TimeoutError:
        raise
    except Exception as exc:
        if len(order) == 1:
            return {order[0]: exc}
        return {i: _imagine(model, {i: states[i]}, {i: plans[i]})[i] for i in order}
    split, start = {}, 0
    for i in order:
        split[i] = outs[start:start + len(plans[i])]
        start += len(plans[i])
    return split


class PixelSpace:
    """The pixel half of ``protocol=planning``: the model re-grounded by ``start`` on the true present,
    candidates imagined with ``step_many``, imagined frames scored by the benchmark's locator."""

    name = "pixels"
    score_key = "best_score_px"

    def __init__(self, model: Any, planner: Planner, store: Any):
        self.model, self.planner, self.store = model, planner, store

    def begin(self, episodes: list[Any]) -> None:
        return None

    def plan(self, t: int, running: list[Any]) -> list[tuple[Any, Any]]:
        planning, failed = [], []  # (episode, its model state re-grounded on the true present)
        for episode in running:
            try:
                grounded = episode.request if t == 0 else episode.env.request(self.store)
                planning.append((episode, self.model.start(grounded)))
            except TimeoutError:
                raise
            except Exception as exc:
                failed.append((episode, exc))
        bests = self.planner.plan_many(self.model, [s for _, s in planning], [action_set(e.env) for e, _ in planning],
                                       [e.env.distances for e, _ in planning], [e.rng for e, _ in planning],
                                       [e.env.max_steps - t for e, _ in planning])
        return failed + [(e, {**b, "first": b["first_frame"]} if isinstance(b, dict) else b)
                         for (e, _), b in zip(planning, bests)]

    def outputs(self, episode: Any) -> dict[str, np.ndarray]:
        return {"generated_video": np.concatenate([episode.initial, *[f[None] for f in episode.predicted]])}
