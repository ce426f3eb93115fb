"""OrbyWorld (the ``tiny-jepa`` package's 32×32 world) as a deterministic, restorable simulator.

``OrbyWorld(seed)`` is a pure function of its seed and the actions: one agent moved 2 px per step
(0 stay, 1 up, 2 down, 3 left, 4 right), two bouncing distractor balls, a pellet (reward 1 when
eaten, then it respawns). Frames are its single-channel floats in [0, 1], stored as
``round(255 x)`` on three equal channels. ``snapshot()`` is the seed plus the actions since
``reset``; ``restore`` replays them. The exact state of every frame (:data:`STATE_VARIABLES`:
agent, balls, ball velocities, pellet, in pixels) is read off the world for ``task=probing``.
"""

from __future__ import annotations

from importlib import metadata as importlib_metadata
from typing import Any, Mapping

import numpy as np

from wfeval.benchmarks.recorded.simulator import Step, require
from wfeval.config.errors import ConfigError
from wfeval.tasks.probing import StateVariable

DEFAULTS: dict[str, Any] = {}
PACKAGES = ("tiny-jepa", "numpy")
ACTIONS = ("stay", "up", "down", "left", "right")
STATE_VARIABLES = tuple(StateVariable(name, "continuous", f"{name} in pixels") for name in (
    "agent_x", "agent_y", "ball0_x", "ball0_y", "ball1_x", "ball1_y",
    "ball0_vx", "ball0_vy", "ball1_vx", "ball1_vy", "pellet_x", "pellet_y"))


def _world_class() -> Any:
    require("tiny_jepa", "tiny-jepa", "The orby benchmark family")
    from tiny_jepa import OrbyWorld

    return OrbyWorld


def check_config(env: Mapping[str, Any]) -> dict[str, Any]:
    if env:
        raise ConfigError(f"benchmark.env: OrbyWorld has no options, got {sorted(env)}")
    _world_class()
    return {}


def identity(config: Mapping[str, Any]) -> dict[str, Any]:
    return {"packages": {p: importlib_metadata.version(p) for p in PACKAGES}}


def action_names(config: Mapping[str, Any]) -> tuple[str, ...]:
    return ACTIONS


def make(config: Mapping[str, Any]) -> "OrbySimulator":
    return OrbySimulator()


def to_uint8(frame: Any) -> np.ndarray:
    """OrbyWorld's H×W float frame in [0, 1] as H×W×3 uint8."""
    gray = np.rint(np.clip(np.asarray(frame, dtype=np.float64), 0.0, 1.0) * 255.0).astype(np.uint8)
    return np.repeat(gray[..., None], 3, axis=-1)


def state_of(world: Any) -> list[float]:
    return [*map(float, world.agent), *map(float, np.asarray(world.balls).reshape(-1)),
            *map(float, np.asarray(world.bvel).reshape(-1)), *map(float, world.pellet)]


def _checked(action: Any) -> int:
    """``action`` as an index of :data:`ACTIONS`; ValueError naming the valid ones otherwise."""
    action = int(action)
    if not 0 <= action < len(ACTIONS):
        raise ValueError(f"orby action {action} is not one of 0..{len(ACTIONS) - 1} ({', '.join(ACTIONS)})")
    return action


class OrbySimulator:
    action_names = ACTIONS

    def __init__(self) -> None:
        self._world_type = _world_class()
        self._world: Any = None
        self._seed, self._actions = 0, []
        self._replay: tuple[int, list[int], Any] | None = None  # restore's own world: (seed, actions, world)

    def reset(self, seed: int) -> np.ndarray:
        self._seed, self._actions = int(seed), []
        self._world = self._world_type(seed=int(seed))
        return to_uint8(self._world.render())

    def step(self, action: int) -> Step:
        action = _checked(action)
        frame, reward = self._world.step(action)
        self._actions.append(action)
        return Step(frame=to_uint8(frame), reward=float(reward), info={"state": state_of(self._world)})

    def frame(self) -> np.ndarray:
        return to_uint8(self._world.render())

    @property
    def world(self) -> Any:
        """The OrbyWorld itself (task=goal_reaching steps it and copies it to run candidate plans)."""
        return self._world

    def state(self) -> list[float]:
        return state_of(self._world)

    def snapshot(self) -> dict[str, Any]:
        return {"seed": self._seed, "actions": list(self._actions)}

    def restore(self, snapshot: Mapping[str, Any]) -> None:
        """The world of ``snapshot``: its seed's world after its actions. A private replay (never handed
        out, so nothing steps it but this) is continued when its actions begin the snapshot's, else
        started again; the world is a copy of it (a step-by-step model's restores: linear, not quadratic)."""
        import copy

        seed, actions = int(snapshot["seed"]), [_checked(a) for a in snapshot.get("actions", ())]
        replay = self._replay
        if replay is None or replay[0] != seed or replay[1] != actions[:len(replay[1])]:
            replay = self._replay = (seed, [], self._world_type(seed=seed))
        for action in actions[len(replay[1]):]:
            replay[2].step(action)
            replay[1].append(action)
        self._seed, self._actions, self._world = seed, actions, copy.deepcopy(replay[2])
