"""Memory Maze (Pasukonis et al. 2022; ``memory-maze`` 1.0.3 on dm_control and MuJoCo) as a
deterministic, restorable simulator with its exact state exposed.

One trajectory is one episode of ``memory_maze_<size>x<size>(seed=...)`` with the extra global
observables (agent position and direction, maze layout, targets): 64×64 first-person frames with
the colour of the current target drawn as a border, 6 discrete actions at 4 Hz. Nothing of the
game is changed; the renderer is set up by :mod:`.renderer` before MuJoCo is imported.

State and snapshots. The episode's maze and targets are a function of the seed (the maze is built
by ``reset``); everything that changes while it runs is MuJoCo's integration state
(``mj_getState(mjSTATE_INTEGRATION)``: time, positions, velocities, controls, solver warm start),
the task's current target and its count, and the numpy ``RandomState`` that picks the next target.
``snapshot()`` holds exactly these (JSON-able, the float arrays as base64 bytes); ``restore``
rebuilds the episode from the seed when another one is loaded and writes them back, so a restored
game continues byte for byte as the original (``tests/benchmarks/test_memory_maze_recording.py``).

Built episodes are kept for reuse. Building one (the maze's dm_control environment, its MuJoCo model
and its GL context) takes ~3 s on Mesa's software renderer, and a process that scores several runs
on one maze (a sweep in one process, ``wfeval.evaluate`` in a training loop, the oracle and
``pose_error`` of one run) restores the same few mazes again and again. A closed simulator hands its
episode to a small pool of this process (:data:`IDLE_EPISODES` at most, the least recently closed
freed first); :meth:`MemoryMazeSimulator.restore` of that maze seed with the same config takes it
back instead of building it again — a restore writes every piece of state the game reads, as it does
for the next sample on one simulator. Only an episode whose GL context is current on no thread is
kept (any thread may draw with it next); at exit dm_control frees their contexts as it frees every
other, and a forked child leaves its parent's episodes alone. ``reset`` (recording) always builds afresh.

Poses are in the maze's grid coordinates as Memory Maze reports them (``agent_pos``: cells, the
outer corner of the bottom-left cell at (0, 0)), heading in radians (``atan2`` of ``agent_dir``;
0 faces +x). :meth:`MemoryMazeSimulator.render_pose` draws the frame the agent would see at any
pose in the current state, without changing the state.
"""

from __future__ import annotations

import base64
import collections
import functools
import math
import os
import threading
from importlib import metadata as importlib_metadata
from typing import Any, Mapping

import numpy as np

from wfeval.benchmarks.memory_maze import renderer
from wfeval.benchmarks.recorded.simulator import Step
from wfeval.config.errors import ConfigError

SIZES = (9, 11, 13, 15)
RECORDER_VERSION = 1  # what a recorded step holds (frame, pose info, snapshot); bump when it changes
#: Memory Maze's own episode length (seconds at 4 Hz control): 250, 500, 750, 1000 s
TIME_LIMITS = {9: 250, 11: 500, 13: 750, 15: 1000}
CONTROL_HZ = 4.0
DEFAULTS = {"size": 9, "camera_resolution": 64, "good_visibility": False}
ACTIONS = ("noop", "forward", "left", "right", "forward_left", "forward_right")
PACKAGES = ("memory-maze", "dm-control", "mujoco", "labmaze", "numpy")
CAMERA = "walker/egocentric"
MAZE_KEYS = ("maze_layout", "targets_pos", "target_colors")
XY_SCALE = 2.0  # metres per maze cell (Memory Maze's arena)
#: built episodes a process keeps for reuse after their simulators close (each holds its MuJoCo model and
#: data and a GL context)
IDLE_EPISODES = 4


class _Episodes:
    """Closed simulators' episodes by (config, maze seed), this process's (see the module's docstring)."""

    def __init__(self, limit: int) -> None:
        self.limit = limit
        self._idle: collections.OrderedDict[tuple, Any] = collections.OrderedDict()
        self._lock = threading.Lock()
        self._inherited: list[Any] = []  # a forked child's copy of its parent's episodes: never freed here

    @staticmethod
    def key(config: Mapping[str, Any], seed: int) -> tuple:
        return tuple(sorted(config.items())) + (("seed", int(seed)),)

    def take(self, config: Mapping[str, Any], seed: int) -> Any:
        with self._lock:
            return self._idle.pop(self.key(config, seed), None)

    def keep(self, config: Mapping[str, Any], seed: int, env: Any) -> bool:
        """Keep ``env`` for reuse when its GL context is current on no thread; False: the caller frees it."""
        if self.limit <= 0 or not _context_free(env):
            return False
        with self._lock:
            key = self.key(config, seed)
            freed = [self._idle.pop(key)] if key in self._idle else []
            self._idle[key] = env
            while len(self._idle) > self.limit:
                freed.append(self._idle.popitem(last=False)[1])
        for old in freed:
            _close_env(old)
        return True

    def clear(self) -> None:
        with self._lock:
            idle, self._idle = list(self._idle.values()), collections.OrderedDict()
        for env in idle:
            _close_env(env)

    def forget_after_fork(self) -> None:
        self._inherited.extend(self._idle.values())
        self._idle = collections.OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._idle)


def _context_free(env: Any) -> bool:
    """Whether ``env``'s GL context (if it has one) is current on no thread (EGL: any thread may draw next)."""
    contexts = getattr(env.physics, "_contexts", None)
    if contexts is None:
        return True
    if not _draws_with_egl():
        return False  # another renderer's threading rules are dm_control's: not kept
    from dm_control._render import base

    return id(contexts.gl) not in base._CURRENT_THREAD_FOR_CONTEXT


def _draws_with_egl() -> bool:
    """Whether MuJoCo draws with EGL here (the renderer module sets it unless the user chose another)."""
    return os.environ.get("MUJOCO_GL") == "egl"


def _close_env(env: Any) -> None:
    try:
        env.close()
    except Exception:  # noqa: BLE001 - freeing a GL context at exit must not fail a run
        pass


EPISODES = _Episodes(IDLE_EPISODES)  # at exit, dm_control frees every GL context itself (none is current)
os.register_at_fork(after_in_child=EPISODES.forget_after_fork)


def check_config(env: Mapping[str, Any]) -> dict[str, Any]:
    unknown = sorted(set(env) - set(DEFAULTS))
    if unknown:
        raise ConfigError(f"benchmark.env: unknown key(s) {unknown}; known: {', '.join(DEFAULTS)}")
    config = {**DEFAULTS, **dict(env)}
    if config["size"] not in SIZES:
        raise ConfigError(f"benchmark.env.size must be one of {list(SIZES)} (Memory Maze's mazes), got {config['size']!r}")
    res = config["camera_resolution"]
    if isinstance(res, bool) or not isinstance(res, int) or not 16 <= res <= 1024:
        raise ConfigError(f"benchmark.env.camera_resolution must be an integer in [16, 1024], got {res!r}")
    config["good_visibility"] = bool(config["good_visibility"])
    renderer.require()
    return config


def steps_per_episode(config: Mapping[str, Any]) -> int:
    return int(TIME_LIMITS[int(config["size"])] * CONTROL_HZ)


def identity(config: Mapping[str, Any]) -> dict[str, Any]:
    """Package versions and the renderer (GL strings): with the config, what the frames depend on."""
    return {"packages": {p: importlib_metadata.version(p) for p in PACKAGES}, "renderer": renderer.gl_identity(),
            "recorder": RECORDER_VERSION}


def action_names(config: Mapping[str, Any]) -> tuple[str, ...]:
    return ACTIONS


def make(config: Mapping[str, Any]) -> "MemoryMazeSimulator":
    return MemoryMazeSimulator(config)


def _b64(array: np.ndarray) -> str:
    return base64.b64encode(np.ascontiguousarray(array).tobytes()).decode("ascii")


def _unb64(text: str, dtype: Any) -> np.ndarray:
    return np.frombuffer(base64.b64decode(text), dtype=dtype).copy()


def heading_of(direction: Any) -> float:
    return float(math.atan2(float(direction[1]), float(direction[0])))


def _check_contacts_with_numpy(task: Any) -> None:
    """Give each target of ``task`` (after its episode's ``reset``, which may build new targets) the contact
    check of :func:`_target_touched`: dm_control's ``TargetSphere._update_activation`` runs at every physics
    substep (50 a control step) and loops over MuJoCo's contacts in Python: about two thirds of an agent
    step's time (``perf/maze_recording.py``: 27–28 ms a step with it, 8.6–10.5 ms with this one). A target of
    another class, or one that only counts some geoms, keeps dm_control's own."""
    from dm_control.locomotion.props.target_sphere import TargetSphere

    for target in task._targets:
        if type(target) is TargetSphere and not target._specific_collision_geom_ids:
            target._update_activation = functools.partial(_target_touched, target)


def _target_touched(target: Any, physics: Any) -> None:
    """``TargetSphere._update_activation`` without specific collision geoms, on MuJoCo's contact arrays:
    an inactive target whose geom is either side of any contact becomes activated and transparent (the
    same reads and writes; ``tests/benchmarks/test_memory_maze_recording.py`` compares both at every
    substep)."""
    if target._activated:
        return
    contact, geom = physics.data.contact, target._geom_id
    if (contact.geom1 == geom).any() or (contact.geom2 == geom).any():
        target._activated = True
        physics.bind(target._material).rgba[-1] = 0


class MemoryMazeSimulator:
    def __init__(self, config: Mapping[str, Any]):
        self.config = check_config(config)
        self.action_names = ACTIONS
        self._tasks = renderer.import_tasks()
        self._env: Any = None
        self._seed: int | None = None
        self._last: Any = None  # the last TimeStep's observation
        self._camera: Any = None  # (physics, Camera) of render_pose

    # -- the episode -----------------------------------------------------------------------------

    def _build(self, seed: int) -> Any:
        c = self.config
        make = getattr(self._tasks, f"memory_maze_{c['size']}x{c['size']}")
        return make(seed=int(seed), global_observables=True, camera_resolution=int(c["camera_resolution"]),
                    good_visibility=bool(c["good_visibility"]))

    @property
    def _composer(self) -> Any:
        env = self._env
        while hasattr(env, "env"):
            env = env.env
        return env

    @property
    def physics(self) -> Any:
        return self._env.physics

    def reset(self, seed: int) -> np.ndarray:
        self.close()
        self._env, self._seed = self._build(seed), int(seed)
        self._last = self._env.reset().observation
        _check_contacts_with_numpy(self._composer.task)
        return np.array(self._last["image"])

    def step(self, action: int) -> Step:
        if not 0 <= int(action) < len(ACTIONS):
            raise ValueError(f"action {action!r} is outside [0, {len(ACTIONS) - 1}] ({', '.join(ACTIONS)})")
        if self._composer._reset_next_step:
            raise RuntimeError(f"the Memory Maze episode ended after {steps_per_episode(self.config)} steps; "
                               "a trajectory stays within one episode")
        ts = self._env.step(int(action))
        self._last = ts.observation
        return Step(np.array(ts.observation["image"]), float(ts.reward or 0.0), False, bool(ts.last()), self.pose_info())

    # -- exact state ----------------------------------------------------------------------------

    def pose(self) -> tuple[float, float, float]:
        """``(x, y, heading)``: grid coordinates (cells) and radians."""
        obs = self._last
        return float(obs["agent_pos"][0]), float(obs["agent_pos"][1]), heading_of(obs["agent_dir"])

    def _pose_now(self) -> tuple[float, float, float]:
        obs = self._observe()
        return float(obs["agent_pos"][0]), float(obs["agent_pos"][1]), heading_of(obs["agent_dir"])

    def pose_info(self) -> dict[str, Any]:
        x, y, heading = self.pose()
        return {"x": x, "y": y, "heading": heading, "target_index": int(self._composer.task._current_target_ix),
                "qpos": [float(q) for q in self.physics.data.qpos]}  # the walker's joints, exactly

    def state(self) -> dict[str, Any]:
        """The exact state a memory or pose measure needs: pose, layout, targets, current target."""
        obs, task = self._last, self._composer.task
        x, y, heading = self.pose()
        return {
            "x": x, "y": y, "heading": heading,
            "step": int(round(self.physics.data.time * CONTROL_HZ)),
            "maze_layout": np.asarray(obs["maze_layout"]).astype(int).tolist(),  # 1: floor; row 0 = bottom
            "targets_pos": np.asarray(obs["targets_pos"], dtype=float).tolist(),
            "target_colors": [np.asarray(c, dtype=float).tolist() for c in task._target_colors[:task.n_targets]],
            "target_index": int(task._current_target_ix),
            "targets_obtained": int(task._targets_obtained),
        }

    def snapshot(self) -> dict[str, Any]:
        import mujoco

        physics, task = self.physics, self._composer.task
        size = mujoco.mj_stateSize(physics.model.ptr, mujoco.mjtState.mjSTATE_INTEGRATION)
        state = np.empty(size, dtype=np.float64)
        mujoco.mj_getState(physics.model.ptr, physics.data.ptr, state, mujoco.mjtState.mjSTATE_INTEGRATION)
        kind, keys, pos, has_gauss, gauss = self._composer.random_state.get_state()
        return {
            "seed": self._seed,
            "physics": _b64(state),
            "target_index": int(task._current_target_ix),
            "targets_obtained": int(task._targets_obtained),
            "rng": {"kind": kind, "keys": _b64(np.asarray(keys, dtype=np.uint32)), "pos": int(pos),
                    "has_gauss": int(has_gauss), "cached_gaussian": float(gauss)},
            "pose": self.pose_info(),
            "maze": {k: v for k, v in self.state().items() if k in MAZE_KEYS},  # read only: restore ignores it
        }

    def restore(self, snapshot: Mapping[str, Any]) -> None:
        import mujoco

        seed = int(snapshot["seed"])
        if self._env is None or self._seed != seed:
            kept = EPISODES.take(self.config, seed)
            if kept is None:
                self.reset(seed)
            else:
                self.close()
                self._env, self._seed = kept, seed
        env, physics = self._composer, self.physics
        state = _unb64(snapshot["physics"], np.float64)
        mujoco.mj_setState(physics.model.ptr, physics.data.ptr, state, mujoco.mjtState.mjSTATE_INTEGRATION)
        physics.forward()
        env.task._current_target_ix = int(snapshot["target_index"])
        env.task._targets_obtained = int(snapshot["targets_obtained"])
        env.task._rewarded_this_step = False
        rng = snapshot["rng"]
        env.random_state.set_state((rng["kind"], _unb64(rng["keys"], np.uint32), int(rng["pos"]),
                                    int(rng["has_gauss"]), float(rng["cached_gaussian"])))
        env._reset_next_step = False
        self._last = self._observe()

    def _observe(self) -> dict[str, Any]:
        """What the wrappers report after a step, computed from the present physics state (no
        observable is updated: reading must not draw from the task's random state)."""
        task = self._composer.task
        arena = task._maze_arena
        body = self.physics.bind(task._walker.root_body)
        center = np.array([arena.maze.width - 2.0, arena.maze.height - 2.0]) / 2.0
        maze = np.flip(np.asarray(arena.maze.entity_layer)[1:-1, 1:-1], 0)
        targets = np.array([self.physics.bind(t.geom).xpos[:2] for t in task._targets]) / arena.xy_scale + center
        return {
            "agent_pos": np.array(body.xpos[:2]) / arena.xy_scale + center,
            "agent_dir": np.array(body.xmat).reshape(3, 3)[:2, 1].copy(),
            "maze_layout": ((maze == " ") | (maze == "P") | (maze == "G")).astype(np.uint8),
            "targets_pos": targets,
            "target_color": task._target_colors[task._current_target_ix],
        }

    # -- rendering any pose ---------------------------------------------------------------------

    def render_pose(self, x: float, y: float, heading: float, qpos: Any = None) -> np.ndarray:
        """The frame (with the target-colour border) the agent would see at ``(x, y, heading)`` in
        the present state; the state itself is left exactly as it was.

        ``qpos``: the walker's joint positions to start from (a step's ``info["qpos"]``): its height
        and the ball's roll are kept, and at that step's own pose the render is that step's frame,
        byte for byte."""
        import mujoco

        physics = self.physics
        size = mujoco.mj_stateSize(physics.model.ptr, mujoco.mjtState.mjSTATE_INTEGRATION)
        saved = np.empty(size, dtype=np.float64)
        mujoco.mj_getState(physics.model.ptr, physics.data.ptr, saved, mujoco.mjtState.mjSTATE_INTEGRATION)
        if qpos is not None:
            physics.data.qpos[:] = np.asarray(qpos, dtype=np.float64)
            physics.forward()
            x0, y0, h0 = self._pose_now()
        else:
            x0, y0, h0 = self.pose()
        # the walker's slide joints and steering hinge may be turned against the world's axes
        # (the spawn rotation): move along the joints' world axes (mjData.xaxis)
        axes = np.array(physics.data.xaxis)
        turn = math.remainder(float(heading) - h0, 2 * math.pi) * (1.0 if axes[3][2] >= 0 else -1.0)
        moves = np.linalg.solve(axes[:2, :2].T, [(float(x) - x0) * XY_SCALE, (float(y) - y0) * XY_SCALE])
        qpos = physics.data.qpos
        qpos[0] += moves[0]
        qpos[1] += moves[1]
        qpos[3] += turn
        physics.forward()
        image = self._pose_camera().render()
        mujoco.mj_setState(physics.model.ptr, physics.data.ptr, saved, mujoco.mjtState.mjSTATE_INTEGRATION)
        physics.forward()
        return _border(np.array(image), self._last["target_color"])

    def _pose_camera(self) -> Any:
        """One dm_control ``Camera`` for every pose render of the loaded maze (``physics.render`` makes
        a new one, with a fresh 10,000-geom scene, on every call: a third of a render's time)."""
        if self._camera is None or self._camera[0] is not self.physics:
            from dm_control.mujoco import Camera

            self._free_camera()
            res = int(self.config["camera_resolution"])
            self._camera = (self.physics, Camera(self.physics, height=res, width=res, camera_id=CAMERA))
        return self._camera[1]

    def _free_camera(self) -> None:
        if self._camera is not None:
            self._camera[1]._scene.free()  # as physics.render does after its one render
            self._camera = None

    def set_target(self, index: int) -> None:
        """Make target ``index`` the current one (it only changes the border colour of a render)."""
        task = self._composer.task
        if not 0 <= int(index) < task.n_targets:
            raise ValueError(f"target index {index} is outside [0, {task.n_targets - 1}]")
        task._current_target_ix = int(index)
        self._last = self._observe()

    def release_context(self) -> None:
        """Make this simulator's GL context current on no thread, from the thread that rendered with
        it (dm_control leaves a context current on the thread that last drew): another thread (``close``,
        the collector at exit) can then free it. Without this, a context drawn with on a scoring
        thread fails to free at exit with ``EGL_BAD_ACCESS`` (issue 32, item 8). Only the EGL
        renderer (the family's) is released; another ``MUJOCO_GL`` keeps dm_control's behaviour."""

        contexts = getattr(self.physics, "_contexts", None) if self._env is not None else None
        if contexts is None or not _draws_with_egl():
            return
        from dm_control._render import base
        from dm_control._render.pyopengl import egl_renderer

        gl, thread = contexts.gl, threading.current_thread()
        if base._CURRENT_CONTEXT_FOR_THREAD.get(thread) != id(gl):
            return
        with gl._render_executor.execution_context():  # the executor's lock, as dm_control's own calls take it
            egl_renderer.EGL.eglMakeCurrent(egl_renderer.EGL_DISPLAY, egl_renderer.EGL.EGL_NO_SURFACE,
                                            egl_renderer.EGL.EGL_NO_SURFACE, egl_renderer.EGL.EGL_NO_CONTEXT)
            base._CURRENT_CONTEXT_FOR_THREAD.pop(thread, None)
            base._CURRENT_THREAD_FOR_CONTEXT.pop(id(gl), None)

    def close(self) -> None:
        """Hand the episode to the pool of built episodes (its GL context released when this thread
        holds it), or free it."""
        self._free_camera()
        if self._env is not None:
            self.release_context()
            if not EPISODES.keep(self.config, self._seed, self._env):
                _close_env(self._env)
        self._env, self._seed, self._last = None, None, None


def _border(image: np.ndarray, color: Any) -> np.ndarray:
    """Memory Maze's ``TargetColorAsBorderWrapper`` (the same expression, the same rounding)."""
    b = int(2 * np.sqrt(image.shape[0] // 64))
    image[:, :b] = color * 255 * 0.7
    image[:, -b:] = color * 255 * 0.7
    image[:b, :] = color * 255 * 0.7
    image[-b:, :] = color * 255 * 0.7
    return image
