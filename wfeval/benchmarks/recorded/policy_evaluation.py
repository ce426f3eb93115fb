"""``task=policy_evaluation`` on every recorded family (the Atari games, Crafter, Memory Maze, orby, pusht):
policies of known skill at tracking the recorded demonstration, their true episodes in the simulator.

A sample's episode starts at its saved simulator state (the last context frame) and lasts the
window's ``horizon`` steps, undiscounted. The **demonstration** is the sample's recorded window: the
behaviour policy's actions and the frames they gave (the reference video). The reward of step t is
how close the frame is to the demonstration's frame t::

    r_t = 1 − mean |frame_t − demo_t| / 255            (in [0, 1]; 1: the same frame)

the same function of the frames in the simulator (the true return: the simulator's own frames) and
inside a world model (the model's frames), so a model exact on frames gets the true returns, and a
model whose frames do not follow the actions gives every policy the same return (rank correlation 0).
It is a tracking objective, the same on every family, not the game's score.

The policies act on the request alone (open loop: the demonstration's actions and a seeded draw
per step), so their skill is known by construction, best first:

- ``demonstrator``: the demonstration's actions (reproduces the demonstration: return = horizon);
- ``follow_75``: the demonstration's action with probability 0.75, else a uniformly random action;
- ``follow_50``: the same with probability 0.5;
- ``random``: a uniformly random action.

A uniformly random action is an id drawn uniformly from ``action_names`` (a discrete game), or, for a
continuous family (pusht: ``controls["action_space"]``), a vector drawn uniformly within the declared
bounds, element by element (:func:`~wfeval.models.base.uniform_action`); the demonstration's action is
then its recorded vector. Following with a probability makes a continuous agent lurch to a random
target and back; a family may rank smoother policies instead: :class:`NoisyDemonstration` (pusht's
scripted pushers, the demonstration with growing Gaussian noise).
"""

from __future__ import annotations

import hashlib
from typing import Any, Mapping

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.benchmarks.recorded.resize import area_resize
from wfeval.benchmarks.recorded.simulator import plain_action
from wfeval.models.base import uniform_action

DISCOUNT = 1.0


def _uniform(*parts: Any) -> float:
    digest = hashlib.sha256("/".join(map(str, ("wfeval.recorded.policy_evaluation", *parts))).encode()).digest()
    return int.from_bytes(digest[:8], "little") / 2.0**64


class FollowDemonstration:
    """The demonstration's action with probability ``follow``, else a uniformly random one (seeded
    by the run's seed, the sample and the step): an id, or a vector within a continuous space's bounds."""

    def __init__(self, name: str, follow: float, seed: int = 0):
        self.name, self.follow, self.seed = name, float(follow), int(seed)

    def act(self, frame: np.ndarray, context: Any) -> Any:
        key = (self.name, self.seed, context.seed, context.request.sample_id, context.step)
        demo, space = context.request.controls["actions"], context.action_space
        continuous = space is not None and space.is_continuous
        if self.follow >= 1.0 or (self.follow > 0.0 and _uniform("follow", *key) < self.follow):
            if continuous:
                return np.asarray(demo[context.step], dtype=space.dtype).reshape(space.shape)
            return int(demo[context.step])
        if continuous:
            return uniform_action(space, ("wfeval.recorded.policy_evaluation", "random", *key))
        n = len(context.action_names)
        return min(int(_uniform("random", *key) * n), n - 1)


class NoisyDemonstration:
    """The demonstration's action plus Gaussian noise of standard deviation ``sigma`` (in action units,
    on every element), clipped into the bounds: a bounded continuous space only. Its skill falls as
    ``sigma`` grows, smoothly (where following with a probability lurches: pusht's scripted pushers)."""

    def __init__(self, name: str, sigma: float, seed: int = 0):
        self.name, self.sigma, self.seed = name, float(sigma), int(seed)

    def act(self, frame: np.ndarray, context: Any) -> np.ndarray:
        space = context.action_space
        found = space.bounds() if space is not None and space.is_continuous else None
        if found is None:
            raise ValueError(f"policy {self.name!r} perturbs a continuous action within its bounds; this benchmark's "
                             f"actions are {'discrete' if space is None else space.describe()}")
        key = (self.name, self.seed, context.seed, context.request.sample_id, context.step)
        digest = hashlib.sha256("/".join(map(str, ("wfeval.recorded.policy_evaluation", "noise", *key))).encode())
        noise = np.random.default_rng(int.from_bytes(digest.digest()[:8], "little")).normal(0.0, self.sigma, space.size)
        low, high = (np.asarray(b, np.float64) for b in found)
        value = np.asarray(context.request.controls["actions"][context.step], np.float64).reshape(-1) + noise
        action = np.clip(value, low, high).astype(space.dtype)
        return np.clip(action, low.astype(space.dtype), high.astype(space.dtype)).reshape(space.shape)


def scripted_policies() -> dict[str, Any]:
    return {p.name: p for p in (FollowDemonstration("demonstrator", 1.0), FollowDemonstration("follow_75", 0.75),
                                FollowDemonstration("follow_50", 0.5), FollowDemonstration("random", 0.0))}


def demonstration(request: GenerationRequest) -> np.ndarray:
    """The demonstration's frames: the sample's reference video (the initial frame first)."""
    from wfeval.storage.artifacts import read_array

    video = request.references.get("video")
    if video is None:
        raise ValueError(f"sample {request.sample_id!r} has no reference video: task=policy_evaluation tracks the "
                         "recorded window")
    return read_array(video)


def tracking_reward(demo: np.ndarray, frame: Any, step: int) -> float:
    """``1 − mean |frame − demo[step]| / 255`` (0 past the demonstration's end)."""
    if not 1 <= step < len(demo):
        return 0.0
    frame = np.asarray(frame, dtype=np.float64)
    if frame.shape != demo[step].shape:
        raise ValueError(f"frame shape {frame.shape} differs from the demonstration's {demo[step].shape}")
    return float(1.0 - np.abs(frame - demo[step]).mean() / 255.0)


class TrackingEnvironment:
    """The simulator from the sample's saved state: ``step(action) -> (frame, reward, done)``, the
    reward :func:`tracking_reward` of the simulator's frame (resized as the recording is)."""

    def __init__(self, benchmark: Any, request: GenerationRequest):
        info = request.metadata["simulator"]
        self.sim, self.resize = benchmark.simulator(), info.get("resize")
        self.sim.restore(info["state"])
        self.demo, self.t = demonstration(request), 0

    def step(self, action: Any) -> tuple[np.ndarray, float, bool]:
        out = self.sim.step(plain_action(action))
        self.t += 1
        frame = area_resize(np.asarray(out.frame)[None], self.resize)[0]
        return frame, tracking_reward(self.demo, frame, self.t), bool(out.terminated or out.truncated)


def settings(request: GenerationRequest) -> Mapping[str, Any]:
    return {"max_steps": len(request.controls["actions"]), "discount": DISCOUNT}
