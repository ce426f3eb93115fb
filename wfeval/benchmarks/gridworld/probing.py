"""``task=probing`` on gridworld: the exact state per frame, and training episodes of their own seeds.

Variables (grid cells; one cell is ``world.cell`` pixels, so a pixel position is the cell times
that and scores the same R²): the agent's row and column, the first object's row and column
(continuous), and its velocity components (discrete, -1, 0 or 1).
"""

from __future__ import annotations

import hashlib
from typing import Any, Sequence

import numpy as np

from wfeval.benchmarks.gridworld import world
from wfeval.tasks.probing import ProbeEpisode, StateVariable

VARIABLES = (
    StateVariable("agent_row", "continuous", "agent cell row"),
    StateVariable("agent_col", "continuous", "agent cell column"),
    StateVariable("object_row", "continuous", "first object's cell row"),
    StateVariable("object_col", "continuous", "first object's cell column"),
    StateVariable("object_drow", "discrete", "first object's row velocity (-1, 0, 1)"),
    StateVariable("object_dcol", "discrete", "first object's column velocity (-1, 0, 1)"),
)


def state_row(state: world.WorldState) -> list[float]:
    if not state.objects:
        raise ValueError("task=probing on gridworld needs benchmark.world.n_objects >= 1 (the object's variables)")
    r, c, dr, dc = state.objects[0]
    return [state.agent[0], state.agent[1], r, c, dr, dc]


def episode(start: world.WorldState, actions: Sequence[int]) -> ProbeEpisode:
    """The rendered frames and the exact state of every frame, from ``start`` under ``actions``."""
    states, frames, state = [], [], start
    for t in range(len(actions) + 1):
        if t:
            state = world.step(state, int(actions[t - 1]))
        states.append(state_row(state))
        frames.append(world.render(state))
    return ProbeEpisode(frames=np.stack(frames), actions=tuple(int(a) for a in actions),
                        states=np.asarray(states, dtype=np.float64))


def training_seeds(seed: int, count: int, taken: set[int]) -> list[int]:
    """``count`` episode seeds from (seed, "probe-train", i), none of them an evaluation sample's."""
    out, i = [], 0
    while len(out) < count:
        value = int.from_bytes(hashlib.sha256(f"{seed}/probe-train/{i}".encode()).digest()[:4], "little")
        if value not in taken:
            out.append(value)
        i += 1
    return out


def training(seed: int, count: int, num_frames: int, spec: world.WorldSpec, taken: set[int],
             action_repeat: float) -> list[Any]:
    return [episode(world.initial_state(s, spec), world.sample_actions(s + 1, num_frames - 1, p_repeat=action_repeat))
            for s in training_seeds(seed, count, taken)]
