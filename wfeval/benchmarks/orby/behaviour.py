"""``task=behavioural_fidelity`` on orby: a goal-reaching policy that finds the agent in the frame.

The samples are orby's goal-reaching samples (:mod:`.goals`: a goal position ``(dx, dy)`` steps of 2 px
from the start, inside the canvas). The episode is the true OrbyWorld from the start: reward 1 at the
step the agent comes within :data:`~.goals.REACH_PX` of the goal (the episode ends), 0 otherwise, for
at most ``max_steps`` steps, discounted by 0.95 per step.

``seek_goal`` reads the agent off the frame it is given: every bright blob (a local maximum above
half the full brightness: the agent, the pellet, a bright ball) is a candidate, refined to the
brightness-weighted centre of its 3×3 neighbourhood; the agent is the candidate nearest to where its
own moves should have taken it (the start, known from the goal, plus 2 px per move, clipped to the
canvas: dead reckoning only says *which* blob is the agent, the frame says *where* it is). It then
moves along the larger remaining gap to the goal, and stays when within reach. A model that draws
the agent elsewhere (or not at all) misleads it.
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.benchmarks.orby.goals import REACH_PX, STEP_PX, OrbyGoalEnvironment

DISCOUNT = 0.95
_MOVES = {1: (0.0, -STEP_PX), 2: (0.0, STEP_PX), 3: (-STEP_PX, 0.0), 4: (STEP_PX, 0.0)}  # action -> (dx, dy) px
_EDGE = (2.5, 29.5)  # OrbyWorld clips the agent's centre here


def _goal(request: GenerationRequest) -> Mapping[str, Any]:
    goal = request.metadata.get("goal")
    if not isinstance(goal, Mapping):
        raise ValueError(f"sample {request.sample_id!r} has no goal: task=behavioural_fidelity builds orby's goal "
                         "samples (task.data.goal)")
    return goal


def dead_reckoning(request: GenerationRequest, actions: Any) -> np.ndarray:
    """Where the agent's moves take it (x, y px): the start (the goal minus its steps) plus 2 px per move."""
    goal = _goal(request)
    position = np.asarray(goal["position_px"], np.float64) - STEP_PX * np.asarray(goal["steps"], np.float64)
    for action in actions:
        position = np.clip(position + np.asarray(_MOVES.get(int(action), (0.0, 0.0))), *_EDGE)
    return position


def blobs(frame: np.ndarray) -> np.ndarray:
    """Centres (x, y px) of the bright blobs of a frame: local maxima above half brightness, refined to
    the brightness-weighted centre of their 3×3 neighbourhood; K×2 (K may be 0)."""
    gray = np.asarray(frame, np.float64)[..., 0] / 255.0
    padded = np.pad(gray, 1)
    windows = np.lib.stride_tricks.sliding_window_view(padded, (3, 3))
    peaks = np.argwhere((gray >= windows.max(axis=(2, 3))) & (gray > 0.5))
    out = []
    for y, x in peaks:
        w = windows[y, x]
        out.append(((w.sum(axis=0) @ np.arange(-1, 2)) / w.sum() + x, (w.sum(axis=1) @ np.arange(-1, 2)) / w.sum() + y))
    return np.asarray(out, np.float64).reshape(-1, 2)


class SeekGoal:
    name = "seek_goal"

    def act(self, frame: np.ndarray, context: Any) -> int:
        found = blobs(frame)
        if not len(found):
            return 0  # no agent seen: stay
        expected = dead_reckoning(context.request, context.actions)
        agent = found[np.argmin(((found - expected) ** 2).sum(axis=1))]
        gap = np.asarray(_goal(context.request)["position_px"], np.float64) - agent
        if np.abs(gap).max() <= REACH_PX:
            return 0
        if abs(gap[0]) >= abs(gap[1]):
            return 4 if gap[0] > 0 else 3
        return 2 if gap[1] > 0 else 1


def policies() -> dict[str, Any]:
    return {SeekGoal.name: SeekGoal()}


class Episode:
    """The true OrbyWorld of a goal sample: ``step(action) -> (frame, reward, done)``."""

    def __init__(self, request: GenerationRequest):
        self.world = OrbyGoalEnvironment(request)

    def step(self, action: int) -> tuple[np.ndarray, float, bool]:
        frame = self.world.step(int(action))
        reached = self.world.at_goal
        return frame, 1.0 if reached else 0.0, reached


def settings(request: GenerationRequest) -> Mapping[str, Any]:
    return {"max_steps": int(_goal(request)["max_steps"]), "discount": DISCOUNT}
