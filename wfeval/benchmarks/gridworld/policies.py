"""``task=policy_evaluation`` on the gridworld: scripted policies of different skill, the true episode,
the reward read off frames.

Every episode is a goal-reaching sample (``task.data.goal``): the agent starts at its cell, the
reward is 1 at the step it enters the goal cell (the episode ends there) and 0 otherwise, for at
most ``max_steps`` steps; the return is discounted by ``discount`` per step (``γ^(t−1)`` for a goal
reached at step t). Inside a world model the reward is read off each new frame: the agent, found by
the colour locator, within half a cell of the goal cell.

The policies see only the frame they are given (the agent is located in it) and the sample's map
(walls and goal from its metadata), best first:

- ``shortest_path``: the next move of a shortest path (walls respected) from where it sees the agent;
- ``toward_goal``: the move that most reduces the larger coordinate gap, blind to walls (it stalls
  against a wall);
- ``epsilon_greedy``: a shortest path, but a uniformly random move with probability 0.3;
- ``random``: a uniformly random action;
- ``noop``: never moves.

Where the agent is not found in a frame the informed policies do nothing (noop).
"""

from __future__ import annotations

import hashlib
from typing import Any, Mapping

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.benchmarks.gridworld import world

DISCOUNT = 0.95
_MOVES = {(-1, 0): 1, (1, 0): 2, (0, -1): 3, (0, 1): 4}


def _uniform(*parts: Any) -> float:
    digest = hashlib.sha256("/".join(map(str, ("wfeval.gridworld.policy", *parts))).encode()).digest()
    return int.from_bytes(digest[:8], "little") / 2.0**64


def _agent_cell(frame: np.ndarray, size: int) -> tuple[int, int] | None:
    from wfeval.functional.control import ColorLocator

    found = ColorLocator(color=world.AGENT_COLOR, size=size)(np.asarray(frame)[None])[0]
    return None if found is None else (int(round(found[0] / size)), int(round(found[1] / size)))


def _map(request: GenerationRequest) -> tuple[world.WorldState, tuple[int, int]]:
    state = world.WorldState.from_dict(request.metadata["world"])
    return state, tuple(request.metadata["goal"]["cell"])


def _next_on_shortest_path(state: world.WorldState, cell: tuple[int, int], goal: tuple[int, int]) -> int:
    """The first move of a shortest path from ``cell`` to ``goal`` (BFS from the goal; noop if none)."""
    rows, cols, walls = state.spec.rows, state.spec.cols, set(state.walls)
    dist = {goal: 0}
    frontier = [goal]
    while frontier:
        nxt = []
        for r, c in frontier:
            for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                n = (r + dr, c + dc)
                if 0 <= n[0] < rows and 0 <= n[1] < cols and n not in walls and n not in dist:
                    dist[n] = dist[(r, c)] + 1
                    nxt.append(n)
        frontier = nxt
    if cell not in dist or cell == goal:
        return 0
    for (dr, dc), action in _MOVES.items():  # up, down, left, right: the first that gets closer
        n = (cell[0] + dr, cell[1] + dc)
        if dist.get(n, 1 << 30) < dist[cell]:
            return action
    return 0


class ShortestPath:
    name = "shortest_path"

    def act(self, frame: np.ndarray, context: Any) -> int:
        state, goal = _map(context.request)
        cell = _agent_cell(frame, state.spec.cell)
        return 0 if cell is None else _next_on_shortest_path(state, cell, goal)


class EpsilonGreedy(ShortestPath):
    name = "epsilon_greedy"

    def __init__(self, epsilon: float = 0.3, seed: int = 0):
        self.epsilon, self.seed = float(epsilon), int(seed)

    def act(self, frame: np.ndarray, context: Any) -> int:
        key = (self.seed, context.seed, context.request.sample_id, context.step)
        if _uniform("explore", *key) < self.epsilon:
            return 1 + min(int(_uniform("move", *key) * 4), 3)
        return super().act(frame, context)


class TowardGoal:
    name = "toward_goal"

    def act(self, frame: np.ndarray, context: Any) -> int:
        state, goal = _map(context.request)
        cell = _agent_cell(frame, state.spec.cell)
        if cell is None:
            return 0
        dr, dc = goal[0] - cell[0], goal[1] - cell[1]
        if dr == dc == 0:
            return 0
        if abs(dr) >= abs(dc):
            return 2 if dr > 0 else 1
        return 4 if dc > 0 else 3


class RandomAction:
    name = "random"

    def __init__(self, seed: int = 0):
        self.seed = int(seed)

    def act(self, frame: np.ndarray, context: Any) -> int:
        key = (self.seed, context.seed, context.request.sample_id, context.step)
        return min(int(_uniform("random", *key) * len(world.ACTIONS)), len(world.ACTIONS) - 1)


class Stay:
    name = "noop"

    def act(self, frame: np.ndarray, context: Any) -> int:
        return 0


#: the policies that read the agent's cell off the frame they see (task=behavioural_fidelity)
PERCEIVING = ("shortest_path", "toward_goal", "epsilon_greedy")


def scripted_policies() -> dict[str, Any]:
    return {p.name: p for p in (ShortestPath(), TowardGoal(), EpsilonGreedy(), RandomAction(), Stay())}


class PolicyEnvironment:
    """The true gridworld of a goal sample: ``step(action) -> (frame, reward, done)``."""

    def __init__(self, request: GenerationRequest):
        self.state, self.goal = _map(request)

    def step(self, action: int) -> tuple[np.ndarray, float, bool]:
        self.state = world.step(self.state, int(action))
        reached = tuple(self.state.agent) == self.goal
        return world.render(self.state), 1.0 if reached else 0.0, reached


def frame_reward(request: GenerationRequest, previous: Any, frame: Any) -> tuple[float, bool]:
    """1 and done when the agent seen in ``frame`` is within half a cell of the goal cell."""
    from wfeval.functional.control import ColorLocator

    state, goal = _map(request)
    size = state.spec.cell
    found = ColorLocator(color=world.AGENT_COLOR, size=size)(np.asarray(frame)[None])[0]
    reached = found is not None and max(abs(found[0] - goal[0] * size), abs(found[1] - goal[1] * size)) <= size / 2
    return (1.0 if reached else 0.0), bool(reached)


def settings(request: GenerationRequest) -> Mapping[str, Any]:
    goal = request.metadata.get("goal")
    if not isinstance(goal, Mapping):
        raise ValueError(f"sample {request.sample_id!r} has no goal: task=policy_evaluation gives the gridworld "
                         "goal samples (task.data.goal)")
    return {"max_steps": int(goal["max_steps"]), "discount": DISCOUNT}
