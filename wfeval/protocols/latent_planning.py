"""Planning in a latent model's own space (``task=goal_reaching`` for a model with the latent
interface, wfeval/models/latent.py; docs/latent-models.md).

As DINO-WM and V-JEPA 2-AC plan: the goal observation is encoded once per episode (``z_g``); at
every real step the true present frame is encoded (``z_0``), the planner's candidate action plans
(:meth:`~wfeval.protocols.planner.Planner.search`: random shooting or CEM, each sample from its own
seeded generator) are imagined with ``predict`` -- the candidates of every running sample in one
batched call -- and each imagined step costs ``‖ẑ_t − z_g‖₂ / ‖z_0 − z_g‖₂`` (the distance to the
goal in units of the present one, so one time penalty, :data:`TIME_PENALTY`, serves every latent
scale). The best plan's first action is executed in the true simulator; success is the
simulator's exact state (the benchmark's goal environment), never the model's.

A calibration encoder with the oracle predictor (``imagines_truth``) imagines nothing: each
candidate is run in the true simulator (the environment's ``true_futures``) and its true frames
are encoded -- what a perfect predictor reaches with that encoder. ``needs_state`` encoders get the
exact state of every frame they encode.

The result's outputs: ``predicted_latents`` (the model's latent for each executed step, T×D) and,
for a model that decodes, ``generated_video`` (the initial frame, then those latents decoded), so
every pixel measure still runs on it.
"""

from __future__ import annotations

from typing import Any, Callable, Sequence

import numpy as np

from wfeval.config.errors import ConfigError
from wfeval.models import interfaces, latent
from wfeval.protocols.plan_actions import action_set
from wfeval.protocols.planner import Planner

#: per imagined step, in units of the present latent distance to the goal (the earlier plan wins a tie)
TIME_PENALTY = 0.01


def check_latent(model: Any) -> None:
    """ConfigError unless ``model`` can plan in its latent space: the latent interface, and no encoder
    that must first be fit on training episodes (``pixels_pca``: task=probing fits it)."""
    name = getattr(model, "name", type(model).__name__)
    interfaces.require(model, interfaces.LATENT, "protocol.space=latent (task=goal_reaching)")
    if callable(getattr(model, "fit", None)):
        raise ConfigError(f"task=goal_reaching: model {name!r} is an encoder fit on training episodes, which only "
                          "task=probing records; plan with model=state_oracle or model=random_projection")


def _each(fn: Callable[[list[int]], list[Any]], items: list[int]) -> dict[int, Any]:
    """``fn`` over all ``items`` in one call; if it fails, one call per item, so a failure stays
    that item's (its exception in place of its value)."""
    try:
        return dict(zip(items, fn(items)))
    except TimeoutError:
        raise
    except Exception as exc:  # noqa: BLE001 - isolated below
        if len(items) == 1:
            return {items[0]: exc}
        out: dict[int, Any] = {}
        for i in items:
            out.update(_each(fn, [i]))
        return out


class LatentSpace:
    """The latent half of ``protocol=planning``: grounding by ``encode``, imagination by ``predict``."""

    name = "latent"
    score_key = "best_score_latent"

    def __init__(self, model: Any, planner: Planner, discrete: Sequence[bool]):
        self.model, self.planner, self.discrete = model, planner, list(discrete)
        self.truth = bool(getattr(model, "imagines_truth", False))
        self.needs_state = bool(getattr(model, "needs_state", False))

    def _encode(self, frames: np.ndarray, states: Any) -> np.ndarray:
        states = None if states is None else np.asarray(states, dtype=np.float64)
        return latent.encode(self.model, frames, states, self.discrete)

    def begin(self, episodes: list[Any]) -> None:
        """Each episode's goal latent (one ``encode`` for all; a failure fails its episode alone)."""
        def goals(ids: list[int]) -> list[np.ndarray]:
            envs = [episodes[i].env for i in ids]
            states = np.stack([e.goal_state() for e in envs]) if self.needs_state else None
            return list(self._encode(np.stack([e.goal_frame() for e in envs]), states))

        for i, got in _each(goals, list(range(len(episodes)))).items():
            if isinstance(got, BaseException):
                episodes[i].failure = got
            else:
                episodes[i].goal_z = got

    def plan(self, t: int, running: list[Any]) -> list[tuple[Any, Any]]:
        """The best plan of every running episode (its exception where grounding or imagination failed)."""
        def present(ids: list[int]) -> list[np.ndarray]:
            envs = [running[i].env for i in ids]
            states = np.stack([e.exact_state() for e in envs]) if self.needs_state else None
            return list(self._encode(np.stack([e.frame() for e in envs]), states))

        grounded = _each(present, list(range(len(running))))
        live = [i for i, z in grounded.items() if not isinstance(z, BaseException)]
        z0 = {j: grounded[i] for j, i in enumerate(live)}
        goal = {j: running[i].goal_z for j, i in enumerate(live)}
        scale = {j: float(np.linalg.norm(z0[j] - goal[j])) or 1.0 for j in z0}
        envs = [running[i].env for i in live]

        def imagine(plans: dict[int, np.ndarray]) -> dict[int, Any]:
            order = list(plans)
            got = _each(lambda ids: self._imagined(ids, plans, z0, envs), order)
            out: dict[int, Any] = {}
            for j, pred in got.items():
                if isinstance(pred, BaseException):
                    out[j] = pred
                else:  # N×H latent distances to the goal, in units of the present distance
                    out[j] = (np.linalg.norm(pred - goal[j][None, None, :], axis=-1) / scale[j], pred[:, 0])
            return out

        bests = self.planner.search(imagine, [action_set(e) for e in envs], [running[i].rng for i in live],
                                    [running[i].env.max_steps - t for i in live], TIME_PENALTY) if live else []
        out = [(running[i], grounded[i]) for i in grounded if isinstance(grounded[i], BaseException)]
        return out + [(running[i], best) for i, best in zip(live, bests)]

    def _imagined(self, ids: list[int], plans: dict[int, np.ndarray], z0: dict[int, np.ndarray],
                  envs: list[Any]) -> list[np.ndarray]:
        """Per sample of ``ids``, its candidates' latents N×H×D: predicted in one batched call, or (the
        oracle predictor) the true futures encoded in one call."""
        if self.truth:
            futures = [envs[j].true_futures(plans[j]) for j in ids]  # (frames N×H×h×w×3, states N×H×S)
            frames = np.concatenate([f.reshape(-1, *f.shape[2:]) for f, _ in futures])
            states = np.concatenate([s.reshape(-1, s.shape[-1]) for _, s in futures]) if self.needs_state else None
            steps = [plans[j].shape[:2] for j in ids]  # N×H (a continuous plan's actions are vectors: N×H×d)
            parts = np.split(self._encode(frames, states), np.cumsum([n * h for n, h in steps])[:-1])
            return [p.reshape(*shape, -1) for p, shape in zip(parts, steps)]
        rows = np.concatenate([np.repeat(z0[j][None], len(plans[j]), axis=0) for j in ids])
        pred = latent.predict(self.model, rows, np.concatenate([plans[j] for j in ids]))  # plans of one length
        return list(np.split(pred, np.cumsum([len(plans[j]) for j in ids])[:-1]))

    def outputs(self, episode: Any) -> dict[str, np.ndarray]:
        predicted = np.stack(episode.predicted).astype(np.float64)
        out = {"predicted_latents": predicted}
        if callable(getattr(self.model, "decode", None)):
            out["generated_video"] = np.concatenate([episode.initial, latent.decode(self.model, predicted)])
        return out
