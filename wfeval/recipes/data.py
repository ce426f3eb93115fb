"""Training data for the recipe, recorded from a benchmark's own simulator — never its samples.

A benchmark's evaluation samples come from seeds it derives from ``(benchmark.seed, split,
index)``. The recipe draws its episodes from another namespace, ``sha256("wfeval.recipes/
<family>/<data.seed>/<episode>")``, and drops any episode seed equal to one of the benchmark's
evaluation seeds (every split it declares, the first ``max(num_samples, 4096)`` indices): the
count of dropped seeds is recorded (it is 0 in practice; the check makes it a fact, not a hope).
Actions come from the benchmark's own behaviour policy (the same repeat probability), so the
model sees the kind of action sequences it is evaluated on.

- ``gridworld``: episodes of the procedural world (``wfeval.benchmarks.gridworld.world``) with the
  benchmark's world spec;
- ``atari`` (``atari_pong`` …, the ``games`` extra): trajectories of the ALE simulator with the
  benchmark's pinned ``env``, ``warmup_steps`` skipped, frames area-resized like the benchmark's;
- ``memory_maze`` (the ``maze3d`` extra): mazes of Memory Maze with the benchmark's ``env``, driven by
  its explore-and-revisit policy (16 episodes × 128 steps unless ``data`` says otherwise);
- ``pusht`` (the ``pusht`` extra): Push-T with the benchmark's ``env`` and ``warmup_steps``, driven by its
  behaviour policy (the ``pusher`` demonstrator); continuous actions — float32 target positions,
  ``episodes × steps × 2``, the benchmark's action space kept in ``Recording.action_space`` — and the
  exact state of every frame (``Recording.state``, ``episodes × (steps + 1) × 6``, named by
  ``state_names``: the benchmark's ``STATE_VARIABLES``).

``state=True`` records the exact state of a game family whose simulator reads it as numbers (Atari's
RAM variables, orby's), ``state=False`` never; the default records it where actions are continuous.
"""

from __future__ import annotations

import copy
import hashlib
import json
import time
from dataclasses import dataclass, field
from typing import Any

import numpy as np

EXCLUDE_FIRST = 4096
#: (episodes, steps) when the config leaves them null: 128 × 16 by default; Memory Maze builds a maze
#: per episode (about 3 s), so fewer, longer episodes (training windows are drawn at any start)
DATA_DEFAULTS = {"memory_maze": (16, 128)}
DEFAULT_EPISODES, DEFAULT_STEPS = 128, 16


def data_size(family: str | None, episodes: int | None, steps: int | None) -> tuple[int, int]:
    """The episodes and steps to record: the configured ones, else the family's defaults."""
    default = DATA_DEFAULTS.get(str(family), (DEFAULT_EPISODES, DEFAULT_STEPS))
    return (default[0] if episodes is None else int(episodes)), (default[1] if steps is None else int(steps))


@dataclass
class Recording:
    frames: np.ndarray  # episodes × (steps + 1) × H × W × 3 uint8
    actions: np.ndarray  # episodes × steps int64 ids; continuous: episodes × steps × D float32
    action_names: tuple[str, ...]  # one per id; continuous: one per element
    seeds: list[int] = field(default_factory=list)  # the episode seeds, in order
    info: dict[str, Any] = field(default_factory=dict)
    action_space: dict[str, Any] | None = None  # continuous: the benchmark's ActionSpace.to_dict(); None: ids
    state: np.ndarray | None = None  # episodes × (steps + 1) × V float64: the exact state of every frame
    state_names: tuple[str, ...] = ()  # one per state variable

    @property
    def is_continuous(self) -> bool:
        return self.action_space is not None and self.action_space.get("kind") == "continuous"

    def data_hash(self) -> str:
        """sha256 of the frames, the actions and the action names (what the model was trained on); a
        continuous recording's also of its action space, a recording with state also of the state and
        its names (a discrete recording without state hashes as it always did)."""
        digest = hashlib.sha256()
        actions = self.actions.astype("<f4" if self.is_continuous else "<i8")
        arrays = [self.frames, actions] + ([] if self.state is None else [np.asarray(self.state, "<f8")])
        for array in arrays:
            digest.update(json.dumps([list(array.shape), str(array.dtype)]).encode())
            digest.update(np.ascontiguousarray(array).tobytes())
        digest.update(json.dumps(list(self.action_names)).encode())
        if self.action_space is not None:
            digest.update(json.dumps(self.action_space, sort_keys=True).encode())
        if self.state is not None:
            digest.update(json.dumps(list(self.state_names)).encode())
        return digest.hexdigest()


def episode_seed(family: str, seed: int, episode: int) -> int:
    digest = hashlib.sha256(f"wfeval.recipes/{family}/{seed}/{episode}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def _evaluation_seeds(bench: Any, seed_of: str, count: int) -> set[int]:
    """Seeds of the benchmark's samples, for every split it declares (``seed_of``: its method)."""
    seeds = set()
    for split in bench.spec.splits:
        other = copy.copy(bench)
        other.split = split
        method = getattr(other, seed_of)
        seeds.update(int(method(i)) for i in range(max(count, EXCLUDE_FIRST)))
    return seeds


def _training_seeds(family: str, seed: int, episodes: int, excluded: set[int]) -> tuple[list[int], int]:
    out, dropped, i = [], 0, 0
    while len(out) < episodes:
        s = episode_seed(family, seed, i)
        i += 1
        if s in excluded:  # never train on an evaluation episode
            dropped += 1
            continue
        out.append(s)
    return out, dropped


def continuous_space(bench: Any) -> Any:
    """The benchmark's declared continuous action space (pusht's target positions), else None."""
    space = getattr(bench.spec, "action_space", None)
    return space if space is not None and space.is_continuous else None


def record(bench: Any, *, episodes: int, steps: int, seed: int = 0, state: bool | None = None) -> Recording:
    """``episodes`` episodes of ``steps`` actions from the simulator behind ``bench`` (an instantiated
    benchmark: ``GridworldBenchmark`` or a recorded game family such as ``AtariBenchmark`` or
    ``PushTBenchmark``); ``state``: record the exact state of every frame (None: where the actions
    are continuous)."""
    if episodes < 1 or steps < 1:
        raise ValueError(f"data.episodes and data.steps must be >= 1, got {episodes} and {steps}")
    family = bench.spec.metadata.get("family")
    with_state = continuous_space(bench) is not None if state is None else bool(state)
    started = time.perf_counter()
    if family == "gridworld":
        if with_state:
            raise ValueError("state=true: the gridworld recorder does not read the world's state (benchmark=pusht, "
                             "atari_* and orby record theirs)")
        rec = _record_gridworld(bench, episodes, steps, seed)
    elif hasattr(bench, "trajectory_seed") and hasattr(bench, "simulator"):
        rec = _record_game(bench, episodes, steps, seed, with_state)
    else:
        raise ValueError(f"benchmark {bench.spec.name!r} (family {family!r}) has no simulator the recipe can "
                         "record from; use benchmark=gridworld or a game (atari_pong, ...)")
    rec.info.update({"benchmark": bench.spec.name, "family": family, "episodes": episodes, "steps": steps,
                     "seed": seed, "seconds": round(time.perf_counter() - started, 3)})
    return rec


def _record_gridworld(bench: Any, episodes: int, steps: int, seed: int) -> Recording:
    from wfeval.benchmarks.gridworld import world

    excluded = _evaluation_seeds(bench, "_episode_seed", bench.num_samples)
    seeds, dropped = _training_seeds("gridworld", seed, episodes, excluded)
    frames = np.empty((episodes, steps + 1, bench.world_spec.height, bench.world_spec.width, 3), np.uint8)
    actions = np.empty((episodes, steps), np.int64)
    for e, s in enumerate(seeds):
        acts = world.sample_actions(s + 1, steps, p_repeat=bench.action_repeat)
        frames[e], _ = world.rollout(world.initial_state(s, bench.world_spec), acts)
        actions[e] = acts
    info = {"seed_namespace": "wfeval.recipes/gridworld/<data.seed>/<episode>", "evaluation_seeds_excluded":
            len(excluded), "dropped_seeds": dropped, "policy": {"kind": "sticky", "p_repeat": bench.action_repeat}}
    return Recording(frames, actions, tuple(world.ACTIONS), seeds, info)


def _record_game(bench: Any, episodes: int, steps: int, seed: int, with_state: bool = False) -> Recording:
    from wfeval.benchmarks.recorded.policy import POLICIES, sticky_actions
    from wfeval.benchmarks.recorded.resize import area_resize
    from wfeval.benchmarks.recorded.simulator import plain_action

    excluded = _evaluation_seeds(bench, "trajectory_seed", bench.num_trajectories)
    seeds, dropped = _training_seeds(bench.family, seed, episodes, excluded)
    n_actions = len(bench.action_names)
    p = 0.0 if bench.policy.kind == "uniform" else float(bench.policy.repeat_probability)
    own = bench.policy.kind not in POLICIES  # a family's own policy (Memory Maze's, Push-T's) acts on the state
    space = continuous_space(bench)
    sim = bench.simulator()
    names = _state_names(bench, sim) if with_state else ()
    clips, acts, states = [], [], []
    for e, s in enumerate(seeds):
        n = bench.warmup_steps + steps
        actor = bench.policy.actor(s, e, n, n_actions) if own else None
        sequence = [] if own else sticky_actions(s, n, n_actions, p)
        first = sim.reset(s)
        shots = [first] if bench.warmup_steps == 0 else []
        rows = [list(sim.state())] if with_state and bench.warmup_steps == 0 else []
        for t in range(n):
            if own:
                sequence.append(plain_action(actor(t, sim)))
            frame = sim.step(sequence[t]).frame
            if t + 1 >= bench.warmup_steps:
                shots.append(frame)
                if with_state:
                    rows.append(list(sim.state()))
        clips.append(area_resize(np.stack(shots), bench.resize))
        acts.append(sequence[bench.warmup_steps:])
        states.append(rows)
    bench.close()
    info = {"seed_namespace": f"wfeval.recipes/{bench.family}/<data.seed>/<episode>",
            "evaluation_seeds_excluded": len(excluded), "dropped_seeds": dropped,
            "policy": bench.policy.identity() if own else {"kind": "sticky", "p_repeat": p},
            "warmup_steps": bench.warmup_steps,
            "env": dict(bench.env), "resize": bench.resize}
    actions = np.asarray(acts, np.float32 if space is not None else np.int64)
    return Recording(np.stack(clips), actions, tuple(bench.action_names), seeds, info,
                     action_space=None if space is None else space.to_dict(),
                     state=np.asarray(states, np.float64) if with_state else None, state_names=names)


def _state_names(bench: Any, sim: Any) -> tuple[str, ...]:
    """The names of the simulator's state variables; ValueError when it reads none as numbers."""
    variables = getattr(bench, "state_variables", None)
    sim.reset(0)
    row = sim.state() if callable(getattr(sim, "state", None)) else None
    if not callable(variables) or not isinstance(row, (list, tuple)):
        raise ValueError(f"state=true: benchmark {bench.spec.name!r} (family {bench.family!r}) has no exact state "
                         "read as numbers per frame (benchmark=pusht, atari_* and orby have)")
    names = tuple(v.name for v in variables())
    if len(names) != len(row):
        raise ValueError(f"state=true: benchmark {bench.spec.name!r} names {len(names)} state variables, its "
                         f"simulator reads {len(row)}")
    return names
