"""``task=memory`` on the gridworld: revisits planned from the exact state, static masks, inverses.

The plan (:func:`revisit_plan`) is a chain of out-and-back walks anchored at the start cell: for each
gap ``g`` of ``task.data.memory.gaps`` (even numbers), walks of ``d`` moves along a shortest path to
a cell ``d`` moves away (walls respected, picked with a generator seeded by the episode) followed by
the ``d`` inverse moves, until ``g`` moves are spent; every move enters a free cell, so none is
blocked and every walk ends exactly where it started. The place of a frame is the agent's cell;
the loops are the walks (an action sequence followed by its inverses: :data:`INVERSE`).

Static content (:func:`static_masks`): everything but the cells the agent and the bouncing objects
occupy in that frame (the walls and the textured background never change).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.benchmarks.gridworld import world
from wfeval.tasks.memory import RevisitPlan

#: the inverse of each action id (noop is its own inverse): what reversibility loops are made of
INVERSE = {0: 0, 1: 2, 2: 1, 3: 4, 4: 3}
_MOVES = {(-1, 0): 1, (1, 0): 2, (0, -1): 3, (0, 1): 4}


def _distances(state: world.WorldState, start: tuple[int, int]) -> dict[tuple[int, int], tuple[int, Any]]:
    """Cell -> (moves from ``start``, previous cell on one shortest path), walls blocking."""
    rows, cols, walls = state.spec.rows, state.spec.cols, set(state.walls)
    found: dict[tuple[int, int], tuple[int, Any]] = {start: (0, None)}
    frontier = [start]
    while frontier:
        nxt = []
        for r, c in frontier:
            for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                cell = (r + dr, c + dc)
                if 0 <= cell[0] < rows and 0 <= cell[1] < cols and cell not in walls and cell not in found:
                    found[cell] = (found[(r, c)][0] + 1, (r, c))
                    nxt.append(cell)
        frontier = nxt
    return found


def _path(found: dict, target: tuple[int, int]) -> list[int]:
    cells = [target]
    while found[cells[-1]][1] is not None:
        cells.append(found[cells[-1]][1])
    cells.reverse()
    return [_MOVES[(b[0] - a[0], b[1] - a[1])] for a, b in zip(cells, cells[1:])]


def revisit_plan(request: GenerationRequest, gaps: Sequence[int]) -> RevisitPlan:
    odd = [g for g in gaps if g % 2]
    if odd:
        from wfeval.config.errors import ConfigError

        raise ConfigError(f"task.data.memory.gaps: the gridworld plans out-and-back walks, so every gap is an even "
                         f"number of moves; got {odd[0]}")
    state = world.WorldState.from_dict(request.metadata["world"])
    anchor = tuple(state.agent)
    found = _distances(state, anchor)
    rng = np.random.default_rng((int(request.metadata.get("episode_seed", 0)), 0x4E30))
    actions: list[int] = []
    loops: list[tuple[int, int]] = []
    for gap in gaps:
        left = int(gap)
        while left:
            reach = max(d for d, _ in found.values())
            d = min(left // 2, reach)
            if d == 0:  # walled in: no move leads anywhere; stay (noop is its own inverse)
                walk = [0, 0]
            else:
                cells = sorted(c for c, (dist, _) in found.items() if dist == d)
                out = _path(found, cells[int(rng.integers(len(cells)))])
                walk = out + [INVERSE[a] for a in reversed(out)]
            loops.append((len(actions), len(actions) + len(walk)))
            actions += walk
            left -= len(walk)
    places, cell = [list(anchor)], anchor
    deltas = {1: (-1, 0), 2: (1, 0), 3: (0, -1), 4: (0, 1), 0: (0, 0)}
    for a in actions:
        cell = (cell[0] + deltas[a][0], cell[1] + deltas[a][1])
        places.append(list(cell))
    return RevisitPlan(actions=tuple(actions), places=tuple(places), loops=tuple(loops))


def static_masks(request: GenerationRequest, actions: Sequence[int]) -> np.ndarray:
    """T×H×W booleans: False on the cells of the agent and the objects in each frame."""
    state = world.WorldState.from_dict(request.metadata["world"])
    spec, cell = state.spec, state.spec.cell
    masks = np.ones((len(actions) + 1, spec.height, spec.width), dtype=bool)
    for t in range(len(actions) + 1):
        if t:
            state = world.step(state, int(actions[t - 1]))
        for r, c in [tuple(state.agent), *[(o[0], o[1]) for o in state.objects]]:
            masks[t, r * cell:(r + 1) * cell, c * cell:(c + 1) * cell] = False
    return masks
