"""The behaviour policy of Memory Maze recordings: explore the maze and come back (``explore_revisit``).

It acts on the simulator's exact state (pose and maze layout), not on pixels: a seeded sequence
of legs, each a shortest path over the maze's floor cells followed by a waypoint controller
(turn towards the next cell centre, walk when facing it). A leg goes to

- a new cell at least ``min_distance`` cells away (*explore*), or, with ``revisit_probability``,
- a cell the agent stood on before (*revisit*: the start of the previous leg, or with equal
  chance any earlier leg's start), so that places are seen again after gaps of a few to hundreds
  of steps;

and with ``look_probability`` a leg ends with a full turn in place (every direction seen from one
spot). The draws come from a generator seeded by the trajectory's seed, so a trajectory is a pure
function of its seed. Six walking actions in a row that move the agent less than 0.05 cell (a
wall contact) make the controller back off with a turn and re-plan the path to the same goal.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from wfeval.benchmarks.recorded.policy import Policy

KIND = "explore_revisit"
VERSION = 2
NOOP, FORWARD, LEFT, RIGHT, FORWARD_LEFT, FORWARD_RIGHT = range(6)


@dataclass(frozen=True)
class MazePolicy(Policy):
    """The recorded families' policies plus ``explore_revisit`` (Memory Maze's default)."""

    kind: str = KIND
    revisit_probability: float = 0.5
    look_probability: float = 0.2
    min_distance: int = 3

    def __post_init__(self) -> None:
        if self.kind != KIND:
            super().__post_init__()
        for name in ("revisit_probability", "look_probability"):
            if not 0.0 <= float(getattr(self, name)) <= 1.0:
                raise ValueError(f"benchmark.policy.{name} must be in [0, 1], got {getattr(self, name)}")
        if isinstance(self.min_distance, bool) or not isinstance(self.min_distance, int) or self.min_distance < 1:
            raise ValueError(f"benchmark.policy.min_distance must be an integer >= 1, got {self.min_distance!r}")

    def identity(self) -> dict[str, Any]:
        if self.kind != KIND:
            return super().identity()
        return {"kind": KIND, "version": VERSION, "revisit_probability": float(self.revisit_probability),
                "look_probability": float(self.look_probability), "min_distance": int(self.min_distance)}

    def actor(self, seed: int, trajectory: int, n: int, n_actions: int) -> Callable[[int, Any], int]:
        if self.kind != KIND:
            return super().actor(seed, trajectory, n, n_actions)
        return Navigator(np.random.default_rng((int(seed), 0x3A2E)), float(self.revisit_probability),
                         float(self.look_probability), int(self.min_distance))


def _wrap(angle: float) -> float:
    return (angle + math.pi) % (2 * math.pi) - math.pi


def shortest_path(layout: np.ndarray, start: tuple[int, int], goal: tuple[int, int]) -> list[tuple[int, int]]:
    """Cells ``(col, row)`` from ``start`` to ``goal`` (both included) over floor cells (4-connected)."""
    rows, cols = layout.shape
    previous = {start: start}
    queue = deque([start])
    while queue:
        cell = queue.popleft()
        if cell == goal:
            break
        c, r = cell
        for nxt in ((c + 1, r), (c - 1, r), (c, r + 1), (c, r - 1)):
            if 0 <= nxt[0] < cols and 0 <= nxt[1] < rows and layout[nxt[1], nxt[0]] and nxt not in previous:
                previous[nxt] = cell
                queue.append(nxt)
    if goal not in previous:
        return [start]
    path = [goal]
    while path[-1] != start:
        path.append(previous[path[-1]])
    return path[::-1]


def distances(layout: np.ndarray, start: tuple[int, int]) -> dict[tuple[int, int], int]:
    rows, cols = layout.shape
    dist = {start: 0}
    queue = deque([start])
    while queue:
        c, r = queue.popleft()
        for nxt in ((c + 1, r), (c - 1, r), (c, r + 1), (c, r - 1)):
            if 0 <= nxt[0] < cols and 0 <= nxt[1] < rows and layout[nxt[1], nxt[0]] and nxt not in dist:
                dist[nxt] = dist[(c, r)] + 1
                queue.append(nxt)
    return dist


class Navigator:
    """``navigator(t, simulator) -> action``: legs of shortest paths, driven by a waypoint controller."""

    def __init__(self, rng: np.random.Generator, revisit: float, look: float, min_distance: int):
        self.rng, self.revisit, self.look, self.min_distance = rng, revisit, look, min_distance
        self.path: list[tuple[int, int]] = []
        self.goal: tuple[int, int] | None = None
        self.leg_starts: list[tuple[int, int]] = []
        self.turning = 0  # steps of the in-place look-around left
        self.backoff = 0
        self.recent: deque = deque(maxlen=6)  # (x, y, walked) of the last steps

    def _new_leg(self, layout: np.ndarray, cell: tuple[int, int]) -> None:
        previous = self.leg_starts[-1] if self.leg_starts else None
        self.leg_starts.append(cell)
        goal = None
        if previous is not None and previous != cell and self.rng.random() < self.revisit:
            earlier = [c for c in self.leg_starts[:-1] if c != cell]
            goal = previous if self.rng.random() < 0.5 or not earlier else earlier[int(self.rng.integers(len(earlier)))]
        if goal is None:
            dist = distances(layout, cell)
            far = sorted(c for c, d in dist.items() if d >= self.min_distance) or sorted(c for c in dist if c != cell)
            goal = far[int(self.rng.integers(len(far)))] if far else cell
        self.goal = goal
        self.path = shortest_path(layout, cell, goal)[1:]

    def __call__(self, t: int, sim: Any) -> int:
        action = self._act(sim)
        x, y, _ = sim.pose()
        self.recent.append((x, y, action in (FORWARD, FORWARD_LEFT, FORWARD_RIGHT)))
        return action

    def _act(self, sim: Any) -> int:
        x, y, heading = sim.pose()
        if self.backoff:
            self.backoff -= 1
            return LEFT if self.backoff % 2 else NOOP
        if self.turning:
            self.turning -= 1
            return LEFT
        layout = np.asarray(sim._observe()["maze_layout"]).astype(bool)
        cell = (min(int(x), layout.shape[1] - 1), min(int(y), layout.shape[0] - 1))
        if len(self.recent) == self.recent.maxlen and all(w for _, _, w in self.recent) \
                and math.dist(self.recent[0][:2], (x, y)) < 0.05:
            self.recent.clear()  # walking into a wall: turn away, then re-plan the path to the same goal
            self.backoff = 4
            self.path = shortest_path(layout, cell, self.goal)[1:] if self.goal else []
            return LEFT
        while self.path and math.hypot(self.path[0][0] + 0.5 - x, self.path[0][1] + 0.5 - y) < 0.3:
            self.path.pop(0)
        if not self.path:
            if self.leg_starts and self.rng.random() < self.look:
                self.turning = 19  # 20 turns of about 18.4 degrees: a full circle
                self._new_leg(layout, cell)
                return LEFT
            self._new_leg(layout, cell)
            if not self.path:
                return LEFT
        tx, ty = self.path[0][0] + 0.5, self.path[0][1] + 0.5
        error = _wrap(math.atan2(ty - y, tx - x) - heading)
        if abs(error) > math.radians(30):
            return LEFT if error > 0 else RIGHT
        if abs(error) > math.radians(10):
            return FORWARD_LEFT if error > 0 else FORWARD_RIGHT
        return FORWARD
