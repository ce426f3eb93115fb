"""``task=behavioural_fidelity`` on pusht: a reach episode whose policy finds the agent in the frame.

The samples are pusht's goal-reaching samples (:mod:`.goals`: the world placed at a recorded start
pose). The reach goal is a position for the agent :data:`GOAL_PX` px from its start, away from the
block (the direction from the block's centre to the agent; turned by 45° steps, nearest first, where
that would leave the arena's inner [:data:`MARGIN`, 512 − :data:`MARGIN`] square): the agent walks
there without pushing the block. The episode is the true Push-T world from the start: reward 1 at the
step the agent's exact position is within :data:`REACH_PX` of the goal (the episode ends), 0 otherwise,
for at most ``max_steps`` steps (``task.data.goal.max_steps``), discounted by 0.95 per step.

``walk_to_goal`` reads the agent off the frame it is given (the colour locator of :mod:`.goals`: the
agent mask's centroid, in arena px) and commands a target :data:`STEP_PX` px from there towards the
goal (the goal itself when nearer): the agent's PD controller follows the target, about 16 px a step.
A model that draws the agent where it is not misleads it: frozen perception (``static``) commands
the same target forever, and the agent stops :data:`STEP_PX` px from its start. A frame where no agent
is found repeats the last command (at the start: the start position, holding still).

:func:`frame_reward` reads the episode's reward off a frame the same way (the located agent within
:data:`REACH_PX` of the goal): the reward a pixel model's frames imply, for reward prediction.
"""

from __future__ import annotations

import math
from typing import Any, Mapping

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.benchmarks.pusht.goals import _centroid, locate
from wfeval.benchmarks.pusht.simulator import HIGH, LOW, PushTSimulator, block_center, to_state

DISCOUNT = 0.95
GOAL_PX = 120.0  # the reach goal's distance from the agent's start (arena px)
STEP_PX = 40.0  # the largest step of a commanded target from the perceived agent
REACH_PX = 15.0  # reached: the agent's centre this close to the goal (the agent's radius)
MARGIN = 40.0  # the goal stays this far inside the arena


def _goal(request: GenerationRequest) -> Mapping[str, Any]:
    goal = request.metadata.get("goal")
    if not isinstance(goal, Mapping) or "start_pose" not in goal:
        raise ValueError(f"sample {request.sample_id!r} has no goal: task=behavioural_fidelity builds pusht's goal "
                         "samples (task.data.goal)")
    return goal


def start_pose(request: GenerationRequest) -> list[float]:
    """The goal sample's start pose (agent x, y, block x, y, angle), where its world is placed."""
    return [float(v) for v in _goal(request)["start_pose"]]


def start_position(request: GenerationRequest) -> np.ndarray:
    """The agent's start (x, y arena px): the goal sample's start pose."""
    return np.asarray(start_pose(request)[:2], np.float64)


def reach_goal(request: GenerationRequest) -> np.ndarray:
    """The agent's goal (x, y arena px): :data:`GOAL_PX` from its start, away from the block, inside the arena."""
    start = start_position(request)
    away = start - block_center(to_state(_goal(request)["start_pose"]))
    base = math.atan2(away[1], away[0]) if np.linalg.norm(away) > 1e-9 else 0.0
    for turn in (0, 1, -1, 2, -2, 3, -3, 4):
        angle = base + turn * math.pi / 4
        goal = start + GOAL_PX * np.array([math.cos(angle), math.sin(angle)])
        if np.all(goal >= LOW + MARGIN) and np.all(goal <= HIGH - MARGIN):
            return goal
    raise ValueError(f"sample {request.sample_id!r}: no reach goal {GOAL_PX} px from the start inside the arena")


def perceived_agent(frame: np.ndarray) -> np.ndarray | None:
    """The agent's centre (x, y arena px) as the colour locator finds it in a frame; None: not found."""
    frame = np.asarray(frame)
    found = _centroid(locate(frame)[1])
    return None if found is None else (found + 0.5) * (HIGH - LOW) / frame.shape[1]  # pixel centres


class WalkToGoal:
    name = "walk_to_goal"

    def __init__(self, step_px: float = STEP_PX):
        self.step_px = float(step_px)

    def act(self, frame: np.ndarray, context: Any) -> list[float]:
        agent = perceived_agent(frame)
        if agent is None:  # no agent seen: the last command stands
            last = context.actions[-1] if context.actions else start_position(context.request)
            return [float(v) for v in np.asarray(last, np.float64)]
        gap = reach_goal(context.request) - agent
        length = float(np.linalg.norm(gap))
        target = agent + (gap if length <= self.step_px else gap * (self.step_px / length))
        return [float(v) for v in np.clip(target, LOW, HIGH)]


def policies() -> dict[str, Any]:
    return {WalkToGoal.name: WalkToGoal()}


class Episode:
    """The true Push-T world of a goal sample: ``step(action) -> (frame, reward, done)``, the reward read
    off the exact state (the agent within :data:`REACH_PX` of the reach goal)."""

    def __init__(self, request: GenerationRequest):
        self.sim = PushTSimulator(int(request.metadata["simulator"]["config"]["observation_size"]))
        self.sim.place(start_pose(request))
        self.goal = reach_goal(request)

    @property
    def at_goal(self) -> bool:
        return bool(np.linalg.norm(np.asarray(self.sim.pose()[:2]) - self.goal) <= REACH_PX)

    def step(self, action: Any) -> tuple[np.ndarray, float, bool]:
        frame = self.sim.step(action).frame
        reached = self.at_goal
        return frame, 1.0 if reached else 0.0, reached


def frame_reward(request: GenerationRequest, previous: Any, frame: Any) -> tuple[float, bool]:
    """The reward a frame shows: 1 (and the episode's end) where the located agent is within reach of the goal."""
    agent = perceived_agent(frame)
    reached = agent is not None and float(np.linalg.norm(agent - reach_goal(request))) <= REACH_PX
    return (1.0 if reached else 0.0), reached


def settings(request: GenerationRequest) -> Mapping[str, Any]:
    return {"max_steps": int(_goal(request)["max_steps"]), "discount": DISCOUNT}
