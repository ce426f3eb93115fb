"""Push-T (``gym-pusht``) as a deterministic, restorable simulator with continuous actions.

The world is gym-pusht's ``PushTEnv``: a round agent driven by a PD controller towards a 2-D
target position (the action, in [0, 512]² px), a T-shaped block pushed by pymunk physics, a fixed
target pose (256, 256, π/4). ``reset(seed)`` draws the start (agent, block position and angle)
from the env's own seeded generator; ``step(action)`` runs the env's own ``step`` (10 physics
substeps at 100 Hz) and renders the 96×96 observation. An action is rounded to float32 before it
is applied (the declared dtype, as a model hands it back), so recorded and replayed actions are
the same numbers. An episode ends at success (coverage of the target pose > 0.95); the next step
then starts a new episode seeded by ``(seed, episode)``.

``snapshot()`` is the seed plus the actions since ``reset``; ``restore`` replays them without
rendering (about 0.3 ms a step) and renders the frame it ends on. pymunk caches contact
impulses between steps, so a world rebuilt from body positions and velocities alone would not
continue exactly: replaying is what makes the frames a pure function of seed and actions.
The exact state of every frame (:data:`STATE_VARIABLES`) is read off the bodies for
``task=probing``: agent and block position in px, the block's angle as sine and cosine.

Rendering needs no display: gym-pusht draws on an off-screen ``pygame.Surface`` and resizes
with OpenCV; the SDL video driver is never opened in ``rgb_array`` mode.
"""

from __future__ import annotations

import math
from importlib import metadata as importlib_metadata
from typing import Any, Mapping, Sequence

import numpy as np

from wfeval.api import ActionSpace
from wfeval.benchmarks.recorded.simulator import Step, require
from wfeval.config.errors import ConfigError
from wfeval.tasks.probing import StateVariable

ENV_ID = "gym_pusht/PushT-v0"
DEFAULTS: dict[str, Any] = {"observation_size": 96}
PACKAGES = ("gym-pusht", "gymnasium", "pymunk", "pygame", "shapely", "opencv-python", "numpy")
ACTIONS = ("target_x", "target_y")
LOW, HIGH = 0.0, 512.0  # the action space's bounds (px), as gym-pusht declares them
GOAL_POSE = (256.0, 256.0, math.pi / 4)  # gym-pusht's fixed target pose of the block
SUCCESS_COVERAGE = 0.95  # gym-pusht's success threshold
#: the block's centre of gravity in its own frame (gym-pusht's tee: the mean of its two bars' centroids)
BLOCK_COG = (0.0, 45.0)
STATE_VARIABLES = (
    StateVariable("agent_x", "continuous", "agent x in px"),
    StateVariable("agent_y", "continuous", "agent y in px"),
    StateVariable("block_x", "continuous", "block x in px (its body origin)"),
    StateVariable("block_y", "continuous", "block y in px (its body origin)"),
    StateVariable("block_sin", "continuous", "sine of the block's angle"),
    StateVariable("block_cos", "continuous", "cosine of the block's angle"),
)


def _env_class() -> Any:
    require("gym_pusht", "gym-pusht", "The pusht benchmark family")
    import gym_pusht  # noqa: F401 - registers gym_pusht/PushT-v0
    import gymnasium

    return gymnasium


def check_config(env: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(env) - set(DEFAULTS))
    if unknown:
        raise ConfigError(f"benchmark.env: unknown option(s) {unknown}; Push-T knows {sorted(DEFAULTS)}")
    out = {**DEFAULTS, **dict(env)}
    size = out["observation_size"]
    if isinstance(size, bool) or not isinstance(size, int) or size < 8:
        raise ConfigError(f"benchmark.env.observation_size must be an integer >= 8 (px), got {size!r}")
    _env_class()
    return out


def identity(config: Mapping[str, Any]) -> dict[str, Any]:
    return {"env_id": ENV_ID, "packages": {p: importlib_metadata.version(p) for p in PACKAGES}}


def action_names(config: Mapping[str, Any]) -> tuple[str, ...]:
    return ACTIONS


def action_space(config: Mapping[str, Any]) -> ActionSpace:
    """The agent's target position: two float32 px coordinates in [0, 512]."""
    return ActionSpace.continuous((2,), low=LOW, high=HIGH, dtype="float32", names=ACTIONS,
                                  metadata={"meaning": "target position of the agent's PD controller (px)"})


def make(config: Mapping[str, Any]) -> "PushTSimulator":
    return PushTSimulator(int(config.get("observation_size", DEFAULTS["observation_size"])))


def as_action(action: Any) -> np.ndarray:
    """An action as the simulator applies it: two numbers rounded to float32, as float64."""
    value = np.asarray(action, dtype=np.float32).reshape(-1)
    if value.shape != (2,) or not np.all(np.isfinite(value)):
        raise ValueError(f"a Push-T action is a target position (x, y) of finite numbers, got {action!r}")
    return value.astype(np.float64)


def block_center(state: Sequence[float]) -> np.ndarray:
    """The block's centre of gravity (px) from a state row (block x, y, sin, cos)."""
    bx, by, s, c = (float(v) for v in state[2:6])
    return np.array([bx + c * BLOCK_COG[0] - s * BLOCK_COG[1], by + s * BLOCK_COG[0] + c * BLOCK_COG[1]])


def to_state(pose: Sequence[float]) -> list[float]:
    """A state row (:data:`STATE_VARIABLES`) of a pose (agent x, y, block x, y, angle)."""
    return [float(pose[0]), float(pose[1]), float(pose[2]), float(pose[3]), math.sin(pose[4]), math.cos(pose[4])]


def set_pose(env: Any, pose: Sequence[float]) -> None:
    """Put gym-pusht's bodies exactly at ``pose`` (agent x, y, block x, y, angle), at rest."""
    env.agent.position = (pose[0], pose[1])
    env.agent.velocity = (0.0, 0.0)
    env.block.angle = pose[4]  # before the position: setting the angle turns the body about its centre of gravity
    env.block.position = (pose[2], pose[3])
    env.block.velocity, env.block.angular_velocity = (0.0, 0.0), 0.0
    env.space.reindex_shapes_for_body(env.block)
    env.space.reindex_shapes_for_body(env.agent)


def overlap(env: Any, pose: Sequence[float], other: Sequence[float]) -> float:
    """The share of the block placed at ``other`` (x, y, angle) that the block at ``pose`` covers:
    gym-pusht's coverage computation (shapely polygons of the tee) with ``other`` as the target pose."""
    from gym_pusht.envs.pusht import pymunk_to_shapely

    target = pymunk_to_shapely(env.get_goal_pose_body(np.asarray(other, dtype=np.float64)), env.block.shapes)
    placed = pymunk_to_shapely(env.get_goal_pose_body(np.asarray(pose, dtype=np.float64)), env.block.shapes)
    return float(target.intersection(placed).area / target.area)


def episode_seed(seed: int, episode: int) -> int:
    """The seed of episode ``episode`` of a trajectory seeded ``seed`` (episode 0: the seed itself)."""
    return int(seed) if episode == 0 else (int(seed) * 1_000_003 + episode) % (2**31)


class PushTSimulator:
    action_names = ACTIONS

    def __init__(self, observation_size: int = 96):
        gymnasium = _env_class()
        size = int(observation_size)
        # the unwrapped env: the recorder, not gymnasium's TimeLimit, decides a trajectory's length;
        # obs_type "state": a step reads the bodies, the frame is rendered only when one is wanted
        self._env = gymnasium.make(ENV_ID, obs_type="state", render_mode="rgb_array", observation_width=size,
                                   observation_height=size).unwrapped
        self.size = size
        self._seed, self._episode, self._done = 0, 0, False
        self._actions: list[list[float]] = []
        self._placed: list[float] | None = None  # the pose place() started from (None: a seeded reset)

    # -- the Simulator protocol (wfeval.benchmarks.recorded.simulator) -----------------------------

    def reset(self, seed: int) -> np.ndarray:
        self._start(int(seed))
        return self.frame()

    def step(self, action: Any) -> Step:
        reward, terminated, info = self._advance(action)
        return Step(frame=self.frame(), reward=reward, terminated=terminated, info=info)

    def frame(self) -> np.ndarray:
        """The observation gym-pusht renders (``PushTEnv._render``: its screen drawn, resized by OpenCV),
        the 512² screen read row by row (pygame's ``tobytes``) where gym-pusht copies a transposed
        ``surfarray`` view: the same pixels (tests/benchmarks/test_pusht.py) at half the CPU of a frame."""
        import cv2
        import pygame

        env = self._env
        screen = env._draw()
        width, height = screen.get_size()
        pixels = np.frombuffer(pygame.image.tobytes(screen, "RGB"), np.uint8).reshape(height, width, 3)
        return np.ascontiguousarray(cv2.resize(pixels, (env.observation_width, env.observation_height)), dtype=np.uint8)

    def snapshot(self) -> dict[str, Any]:
        start = {"seed": self._seed} if self._placed is None else {"start": list(self._placed)}
        return {**start, "actions": [list(a) for a in self._actions]}

    def restore(self, snapshot: Mapping[str, Any]) -> None:
        """Replay the snapshot's actions from its seed, or from the pose it was placed at (:meth:`place`),
        continuing the present run when its actions are a prefix of the snapshot's."""
        actions = [as_action(a).tolist() for a in snapshot.get("actions", ())]
        origin = ("start", [float(v) for v in snapshot["start"]]) if "start" in snapshot else ("seed", int(snapshot["seed"]))
        here = ("seed", self._seed) if self._placed is None else ("start", self._placed)
        n = len(self._actions)
        if not (origin == here and n <= len(actions) and actions[:n] == self._actions):
            self.place(origin[1]) if origin[0] == "start" else self._start(origin[1])
            n = 0
        for action in actions[n:]:
            self._advance(action)

    def place(self, pose: Sequence[float]) -> np.ndarray:
        """Start a world at rest with the agent at ``pose[0:2]`` and the block at ``pose[2:5]`` (x, y of
        its body origin, angle): exactly there (the angle set before the position, unlike gym-pusht's
        ``reset_to_state``), every velocity zero. Its snapshot is the pose plus the actions since."""
        pose = [float(v) for v in pose]
        self._seed, self._episode, self._done, self._actions = 0, 0, False, []
        self._placed = pose
        env = self._env
        env.reset(seed=0)
        set_pose(env, pose)
        return self.frame()

    def close(self) -> None:
        self._env.close()

    # -- exact state ---------------------------------------------------------------------------------

    def pose(self) -> list[float]:
        """Agent x, y, block x, y and angle (radians, unwrapped), as :meth:`place` takes them."""
        env = self._env
        return [float(env.agent.position[0]), float(env.agent.position[1]), float(env.block.position[0]),
                float(env.block.position[1]), float(env.block.angle)]

    def state(self) -> list[float]:
        return to_state(self.pose())

    def coverage(self) -> float:
        """The share of the target pose the block covers (gym-pusht's own shapely computation)."""
        return float(self._env._get_coverage())

    @property
    def env(self) -> Any:
        """gym-pusht's ``PushTEnv`` itself (read only: a caller that steps it breaks ``snapshot``)."""
        return self._env

    # -- internals -----------------------------------------------------------------------------------

    def _start(self, seed: int) -> None:
        self._seed, self._episode, self._done, self._actions, self._placed = seed, 0, False, [], None
        self._env.reset(seed=episode_seed(seed, 0))

    def _advance(self, action: Any) -> tuple[float, bool, dict[str, Any]]:
        value = as_action(action)
        if self._done:  # the last step ended an episode: this one starts the next
            self._episode += 1
            self._env.reset(seed=episode_seed(self._seed, self._episode))
        _, reward, terminated, _, info = self._env.step(value)
        self._done = bool(terminated)
        self._actions.append(value.tolist())
        return float(reward), bool(terminated), {"state": self.state(), "coverage": float(info["coverage"])}
