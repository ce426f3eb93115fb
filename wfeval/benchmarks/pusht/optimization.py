"""``task=policy_optimization`` on pusht: the reach task of :mod:`.reach` for a tabular learner.

Every episode starts at a goal sample's start (the world placed at a recorded pose, at rest) and
aims at its reach goal (:func:`.reach.reach_goal`: 120 px from the agent's start, away from the
block). The learner has :data:`MOVES`: stay, or one of 8 directions; an action becomes a target
position :data:`MOVE_PX` px from the agent **as located in the frame it sees** (the colour locator;
the model's frame inside the model), clipped to the arena (:func:`command`): the agent's PD
controller then walks about 24 px a step. It observes the goal's direction from the located agent in
8 sectors and its distance in bands (:data:`BANDS`), or that no agent is in view.

The reward, read off a frame the same way, is **closeness**: ``max(0, 1 − d / 120 px)`` per step
with ``d`` the located agent's distance to the goal (0 when no agent is in view); an episode runs
its ``max_steps`` (12) steps, discount 0.95, so the largest return is ``sum(0.95**t)``. A sparse reward
(1 on reaching the goal) is rarely met by the exploration of a budget this small: closeness tells the
learner which way is better at every step, as Pong's tracking reward does. Held-out starts: the
sample's start moved by ``warmup`` uniformly random moves of the true world.
"""

from __future__ import annotations

import math
from typing import Any, Callable, Hashable, Mapping

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.benchmarks.pusht import reach
from wfeval.benchmarks.pusht.simulator import HIGH, LOW, PushTSimulator

MOVE_PX = 60.0  # a move's target: this far from the located agent (the agent walks about 24 px a step)
MOVES = ((0.0, 0.0),) + tuple((math.cos(k * math.pi / 4), math.sin(k * math.pi / 4)) for k in range(8))
BANDS = (reach.REACH_PX, 60.0)  # distance bands to the goal (px): reached, near, far
DEFAULTS = {"discount": reach.DISCOUNT, "n_actions": len(MOVES), "max_steps": 12, "train_episodes": 30,
            "eval_episodes": 3, "warmup": 2}


def defaults(request: GenerationRequest) -> Mapping[str, Any]:
    steps = int(DEFAULTS["max_steps"])
    return {**DEFAULTS, "max_return": float(sum(DEFAULTS["discount"] ** t for t in range(steps)))}


def command(request: GenerationRequest) -> Callable[[Any, int], list[float]]:
    """``(frame, move) -> target``: the move's target from the agent located in the frame (not found: hold
    the goal sample's start, which no frame moves)."""
    def target(frame: Any, action: int) -> list[float]:
        agent = reach.perceived_agent(frame)
        here = reach.start_position(request) if agent is None else agent
        return [float(v) for v in np.clip(here + MOVE_PX * np.asarray(MOVES[int(action)]), LOW, HIGH)]

    return target


def observer(request: GenerationRequest) -> Callable[[Any, Any], Hashable]:
    goal = reach.reach_goal(request)

    def observe(previous: Any, frame: Any) -> Hashable:
        agent = reach.perceived_agent(frame)
        if agent is None:
            return "no agent"
        gap = goal - agent
        sector = int(round(math.atan2(gap[1], gap[0]) / (math.pi / 4))) % 8
        return sector, int(np.searchsorted(BANDS, float(np.linalg.norm(gap))))

    return observe


def reward(request: GenerationRequest, previous: Any, frame: Any) -> tuple[float, bool]:
    agent = reach.perceived_agent(frame)
    if agent is None:
        return 0.0, False
    return max(0.0, 1.0 - float(np.linalg.norm(reach.reach_goal(request) - agent)) / reach.GOAL_PX), False


class Environment:
    """The true Push-T world of a goal sample, reset to its start or to a held-out start."""

    def __init__(self, request: GenerationRequest):
        self.request, self.command = request, command(request)
        self.sim = PushTSimulator(int(request.metadata["simulator"]["config"]["observation_size"]))

    def reset(self, episode: int, seed: Any, warmup: int) -> np.ndarray:
        frame = self.sim.place(reach.start_pose(self.request))
        if episode:
            for action in np.random.default_rng(seed).integers(0, len(MOVES), size=warmup):
                frame = self.sim.step(self.command(frame, int(action))).frame
        return frame

    def step(self, action: Any) -> np.ndarray:
        return self.sim.step(action).frame
