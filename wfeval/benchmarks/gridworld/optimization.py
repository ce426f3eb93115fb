"""``task=policy_optimization`` on the gridworld: what the learner sees, the reward, the true episode.

Every episode is a goal-reaching sample (``task.data.goal``), scored as ``task=policy_evaluation`` scores
it (:mod:`wfeval.benchmarks.gridworld.policies`): reward 1 at the step the agent is seen on the goal
cell (the episode ends there), discount 0.95, at most ``max_steps`` steps; the largest return is 1.
The learner observes the agent's cell as the colour locator finds it in a frame (None where it finds
no agent): a tabular learner over the map's cells. Held-out starts: ``warmup`` uniformly random moves
of the true world from the sample's start (redrawn, up to 16 times, while they end on the goal).
"""

from __future__ import annotations

from typing import Any, Callable, Hashable, Mapping

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.benchmarks.gridworld import policies, world

DEFAULTS = {"discount": policies.DISCOUNT, "max_return": 1.0, "n_actions": len(world.ACTIONS),
            "train_episodes": 200, "eval_episodes": 4, "warmup": 2}


def defaults(request: GenerationRequest) -> Mapping[str, Any]:
    return {**DEFAULTS, "max_steps": int(policies.settings(request)["max_steps"])}


def observer(request: GenerationRequest) -> Callable[[Any], Hashable]:
    size = world.WorldState.from_dict(request.metadata["world"]).spec.cell
    return lambda previous, frame: policies._agent_cell(frame, size)


class Environment:
    """The true gridworld of a goal sample, reset to its start or to a held-out start."""

    def __init__(self, request: GenerationRequest):
        self.start, self.goal = policies._map(request)
        self.state = self.start

    def reset(self, episode: int, seed: Any, warmup: int) -> np.ndarray:
        self.state = self.start
        if episode:
            rng = np.random.default_rng(seed)
            for _ in range(16):
                state = self.start
                for action in rng.integers(0, len(world.ACTIONS), size=warmup):
                    state = world.step(state, int(action))
                if tuple(state.agent) != self.goal:
                    self.state = state
                    break
        return world.render(self.state)

    def step(self, action: int) -> np.ndarray:
        self.state = world.step(self.state, int(action))
        return world.render(self.state)
