"""``task=goal_reaching`` on orby: a goal position for the agent, and the true world to plan in.

A sample starts at a recorded window's first frame (its saved simulator state). Its goal is the
agent moved by ``(dx, dy)`` steps of 2 px, ``min_distance <= |dx| + |dy| <= max_distance``, inside
[4, 28] px on both axes (no wall clips the way: the shortest path is exactly ``|dx| + |dy|``
steps), drawn with a generator seeded by the trajectory and window. The goal observation is the
start's world with the agent at the goal (balls and pellet where they start). Success is the
simulator's exact state: the agent within :data:`REACH_PX` of the goal on both axes (half a step)
at any real step within ``max_steps``. Orby plans in latent space only: no pixel locator tells the
agent from the pellet (both are bright Gaussian blobs).
"""

from __future__ import annotations

import copy
import dataclasses
from typing import Any, Mapping

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.benchmarks.orby.simulator import ACTIONS, OrbySimulator, state_of, to_uint8

STEP_PX = 2.0  # the agent's move per action
REACH_PX = 1.0  # success: the agent within this many pixels of the goal on both axes
LOW, HIGH = 4.0, 28.0  # goal positions (px) the agent reaches without being clipped at the canvas edge
#: recorded-window fields that describe the recorded actions, not a goal episode (the replay adds its own)
_RECORDED_ONLY = ("rewards", "return", "terminated", "truncated", "episode_ends", "context_rewards", "step_info")


def goal_for(agent: Any, seed: Any, min_distance: int = 3, max_distance: int = 6, max_steps: int = 16) -> dict:
    """A goal position ``agent + 2 (dx, dy)`` px at ``|dx| + |dy|`` in [min_distance, max_distance] steps."""
    if not 1 <= min_distance <= max_distance or max_steps < 1:
        raise ValueError(f"task.data.goal: need 1 <= min_distance <= max_distance and max_steps >= 1, got "
                         f"{min_distance}, {max_distance}, {max_steps}")
    ax, ay = (float(v) for v in agent)
    options = [(dx, dy) for dx in range(-max_distance, max_distance + 1) for dy in range(-max_distance, max_distance + 1)
               if min_distance <= abs(dx) + abs(dy) <= max_distance
               and LOW <= ax + STEP_PX * dx <= HIGH and LOW <= ay + STEP_PX * dy <= HIGH]
    if not options:
        raise ValueError(f"no goal {min_distance}..{max_distance} steps from the agent at ({ax:g}, {ay:g}) px lies "
                         f"inside [{LOW:g}, {HIGH:g}] px")
    dx, dy = options[int(np.random.default_rng((*seed, 0x60A1)).integers(len(options)))]
    return {"position_px": [ax + STEP_PX * dx, ay + STEP_PX * dy], "steps": [dx, dy], "distance": abs(dx) + abs(dy),
            "max_steps": int(max_steps), "reach_px": REACH_PX}


def goal_request(request: GenerationRequest, goal: Mapping[str, Any], store: Any) -> GenerationRequest:
    """The recorded window's request made a goal-reaching sample: its start frame and a goal
    observation, no script and no reference (the planner's actions, replayed, give both)."""
    meta = request.metadata
    info = goal_for(_restored(request).agent, (int(meta["trajectory_seed"]), int(meta["window"])), **dict(goal))
    env = OrbyGoalEnvironment(request, info)
    generation = {k: v for k, v in request.generation.items() if k != "num_frames"}
    metadata = {**{k: v for k, v in meta.items() if k not in _RECORDED_ONLY}, "goal": info}
    return dataclasses.replace(
        request, inputs={"image": request.inputs["image"], "goal_image": store.put_array(env.goal_frame(), kind="image")},
        controls={"action_names": list(ACTIONS)}, references={}, generation=generation, metadata=metadata)


def _restored(request: GenerationRequest) -> Any:
    """The OrbyWorld at the sample's saved start."""
    sim = OrbySimulator()
    sim.restore(request.metadata["simulator"]["state"])
    return sim.world


class OrbyGoalEnvironment:
    """The true OrbyWorld of one goal-reaching sample: step it, observe it, run candidate plans in it."""

    n_actions = len(ACTIONS)

    def __init__(self, request: GenerationRequest, goal: Mapping[str, Any] | None = None):
        self.world = _restored(request)
        self.set_goal(goal if goal is not None else request.metadata["goal"])

    def set_goal(self, goal: Mapping[str, Any]) -> None:
        self.goal_xy = np.asarray(goal["position_px"], dtype=np.float64)
        self.goal_cell = [float(v) for v in self.goal_xy]  # what the episode summary records as its goal
        self.max_steps, self.optimal_steps = int(goal["max_steps"]), int(goal["distance"])
        self._goal_world = copy.deepcopy(self.world)
        self._goal_world.agent = self.goal_xy.copy()

    @property
    def at_goal(self) -> bool:
        return bool(np.abs(np.asarray(self.world.agent) - self.goal_xy).max() <= REACH_PX)

    @property
    def distance(self) -> int:
        """Steps left to the goal (per axis, the 2 px steps until within reach)."""
        gap = np.maximum(np.abs(np.asarray(self.world.agent) - self.goal_xy) - REACH_PX, 0.0)
        return int(np.ceil(gap / STEP_PX).sum())

    def step(self, action: int) -> np.ndarray:
        action = int(action)
        if not 0 <= action < self.n_actions:
            raise ValueError(f"orby action {action} is not one of 0..{self.n_actions - 1}")
        frame, _ = self.world.step(action)
        return to_uint8(frame)

    def frame(self) -> np.ndarray:
        return to_uint8(self.world.render())

    def exact_state(self) -> list[float]:
        return state_of(self.world)

    def goal_frame(self) -> np.ndarray:
        return to_uint8(self._goal_world.render())

    def goal_state(self) -> list[float]:
        return state_of(self._goal_world)

    def true_futures(self, plans: Any) -> tuple[np.ndarray, np.ndarray]:
        """Each plan run in a copy of the true world: frames N×H×32×32×3 and exact states N×H×12."""
        plans = np.asarray(plans, dtype=np.int64)
        frames = np.empty((*plans.shape, 32, 32, 3), dtype=np.uint8)
        states = np.empty((*plans.shape, 12), dtype=np.float64)
        for n, plan in enumerate(plans):
            world = copy.deepcopy(self.world)
            for t, action in enumerate(plan):
                frames[n, t] = to_uint8(world.step(int(action))[0])
                states[n, t] = state_of(world)
        return frames, states
