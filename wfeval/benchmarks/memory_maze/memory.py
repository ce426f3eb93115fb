"""``task=memory`` on Memory Maze: revisits planned from the exact state, and the static masks.

The plan (:func:`revisit_plan`) is closed loop on the true simulator, restored from the sample's
snapshot: a few no-op steps first (the ball rolls on from the recording; :data:`SETTLE`), then one
leg per gap ``g`` of ``task.data.memory.gaps`` (in steps), each starting and ending at the same
pose, separated by one no-op:

- ``g < WALK_MIN``: look away and back: ``g // 2`` turns left, as many right (a no-op if ``g`` is odd);
- otherwise an out-and-back walk planned on the true layout: along a shortest path over floor cells to
  a cell ``d`` cells away (seeded by the trajectory; the longest that fits), a 180° turn, back to the
  leg's start point, then turned to its first heading;

each leg padded with no-ops to exactly ``g`` steps when shorter (a long walk may take longer: the
gap recorded is the real one). A rolling ball never comes back to exactly the same pose: a leg ends
within :data:`POSITION_TOLERANCE` cells and :data:`HEADING_TOLERANCE_DEG` degrees of where it
began (``tests/benchmarks/test_memory_maze_memory.py`` checks this in the simulator). The place of
a frame is its leg and the leg's start pose (``{"leg", "x", "y", "heading"}``) at the leg's first
and last frame, None elsewhere: each leg is one revisit pair, its gap the leg's length, and one loop.

Because the true frames at a revisit differ a little too, the maze asks ``revisit_error`` to measure
against the truth (``metadata["memory"]["measure"] == "change_vs_truth"``, :mod:`wfeval.metrics.memory`).

Static content (:func:`static_masks`): the whole view (walls, floor, targets: nothing in the maze
moves) but the ``border_px``-wide border, which shows the current target's colour.
"""

from __future__ import annotations

import math
from typing import Any, Sequence

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.benchmarks.memory_maze.policy import FORWARD, FORWARD_LEFT, FORWARD_RIGHT, LEFT, NOOP, RIGHT, \
    _wrap, distances, shortest_path
from wfeval.tasks.memory import RevisitPlan

SETTLE = 4  # no-ops before the first leg: the recorded ball comes to rest (< 0.01 cell)
WALK_MIN = 40  # steps: a shorter gap looks away and back, a longer one walks out and back
POSITION_TOLERANCE = 0.35  # cells between a leg's start and end position
HEADING_TOLERANCE_DEG = 20.0  # degrees between a leg's start and end heading
MEASURE = "change_vs_truth"


def _drive(sim: Any, target: tuple[float, float], actions: list[int], limit: int, close: float = 0.2) -> None:
    """Waypoint control to ``target`` (cells), then no-ops until the ball rests; at most ``limit`` steps."""
    start = len(actions)
    while len(actions) - start < limit:
        x, y, heading = sim.pose()
        if math.hypot(target[0] - x, target[1] - y) < close:
            break
        error = _wrap(math.atan2(target[1] - y, target[0] - x) - heading)
        if abs(error) > math.radians(30):
            a = LEFT if error > 0 else RIGHT
        elif abs(error) > math.radians(10):
            a = FORWARD_LEFT if error > 0 else FORWARD_RIGHT
        else:
            a = FORWARD
        sim.step(a)
        actions.append(a)


def _turn_to(sim: Any, heading: float, actions: list[int], limit: int = 16) -> None:
    for _ in range(limit):
        error = _wrap(heading - sim.pose()[2])
        if abs(error) < math.radians(9):
            break
        a = LEFT if error > 0 else RIGHT
        sim.step(a)
        actions.append(a)
    for _ in range(2):  # the turn's momentum dies out
        sim.step(NOOP)
        actions.append(NOOP)


def _walk(sim: Any, layout: np.ndarray, d: int, rng: np.random.Generator) -> list[int]:
    x0, y0, h0 = sim.pose()
    cell = (min(int(x0), layout.shape[1] - 1), min(int(y0), layout.shape[0] - 1))
    found = distances(layout, cell)
    reach = max(found.values())
    d = min(d, reach)
    goal = sorted(c for c, k in found.items() if k == d)[int(rng.integers(sum(1 for k in found.values() if k == d)))]
    path = shortest_path(layout, cell, goal)
    actions: list[int] = []
    for c in path[1:]:
        _drive(sim, (c[0] + 0.5, c[1] + 0.5), actions, 40, close=0.3)
    for c in reversed(path[:-1]):
        _drive(sim, (c[0] + 0.5, c[1] + 0.5), actions, 40, close=0.3)
    _drive(sim, (x0, y0), actions, 20, close=0.12)
    for _ in range(3):
        sim.step(NOOP)
        actions.append(NOOP)
    _turn_to(sim, h0, actions)
    return actions


def revisit_plan(simulator: Any, request: GenerationRequest, gaps: Sequence[int]) -> RevisitPlan:
    """The legs (see the module) planned on ``simulator``, restored from the sample's snapshot."""
    sim = simulator
    sim.restore(request.metadata["simulator"]["state"])
    layout = np.asarray(request.metadata["maze"]["maze_layout"]).astype(bool)
    rng = np.random.default_rng((int(request.metadata.get("trajectory_seed", 0)), int(request.metadata.get("window", 0)),
                                 0x4D45))
    actions: list[int] = []
    for _ in range(SETTLE):
        sim.step(NOOP)
        actions.append(NOOP)
    places: list[Any] = [None] * (SETTLE + 1)
    loops: list[tuple[int, int]] = []
    for k, gap in enumerate(gaps):
        if k:
            sim.step(NOOP)
            actions.append(NOOP)
            places.append(None)
        x, y, h = sim.pose()
        key = {"leg": k, "x": round(x, 3), "y": round(y, 3), "heading": round(h, 3)}
        places[-1] = key
        first = len(actions)
        if gap < WALK_MIN:
            leg = [LEFT] * (gap // 2) + [RIGHT] * (gap // 2) + [NOOP] * (gap % 2)
            for a in leg:
                sim.step(a)
        else:
            leg = _walk(sim, layout, max(1, (gap - 24) // 10), rng)
        for _ in range(gap - len(leg)):  # padded to the gap with no-ops (played: the next leg starts after them)
            sim.step(NOOP)
            leg.append(NOOP)
        actions += leg
        places += [None] * (len(leg) - 1) + [key]
        loops.append((first, len(actions)))
    return RevisitPlan(actions=tuple(actions), places=tuple(places), loops=tuple(loops))


def static_masks(request: GenerationRequest, actions: Sequence[int]) -> np.ndarray:
    """T×H×W booleans: the whole view but the target-colour border."""
    image = request.metadata["maze"]
    res = int(request.metadata["simulator"]["config"]["camera_resolution"])
    b = int(image["border_px"])
    masks = np.zeros((len(actions) + 1, res, res), dtype=bool)
    masks[:, b:res - b, b:res - b] = True
    return masks
