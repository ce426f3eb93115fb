"""The adapter shared by simulator-recorded families (Atari, Crafter): record, cache, build requests.

Trajectory ``i`` of split ``s`` starts from seed ``sha256(seed/s/i)``; the behaviour policy picks
``warmup_steps + windows_per_trajectory × (context_frames + horizon) − 1`` actions and the
simulator renders one frame per action. Window ``j`` starts at step
``warmup_steps + j × (context_frames + horizon)``; with ``b`` its last context frame, a sample is

- ``inputs["context"]``: frames ``b−C+1 … b`` (C×H×W×3), ``inputs["image"]``: frame ``b``;
- ``controls["actions"]``: the ``horizon`` actions taken from frame ``b`` on (``action_names``
  names them), ``controls["context_actions"]``: the C−1 actions between the context frames;
- ``references["video"]``: frames ``b … b+horizon`` (horizon+1 frames: it starts with the last
  context frame, as every generated video starts with its initial frame);
- ``metadata``: rewards, episode ends, the trajectory position, and ``simulator``: what a
  simulator baseline needs to continue the game exactly from frame ``b``.

Recorded trajectories are cached by content key (:mod:`.cache`), so a second run simulates
nothing; see docs/games.md.
"""

from __future__ import annotations

import hashlib
import logging
import time
from typing import Any, Mapping, Sequence

import numpy as np

from wfeval.api import (
    BenchmarkSpec,
    EvaluationProtocolSpec,
    GenerationRequest,
    WorldTaskConfig,
)
from wfeval.benchmarks.base import metric_specs
from wfeval.benchmarks.recorded.policy import Policy
from wfeval.benchmarks.recorded.resize import area_resize
from wfeval.benchmarks.recorded.runtime import RecordingRuntime
from wfeval.benchmarks.recorded.scorer import RecordingScorer
from wfeval.benchmarks.recorded.simulator import Simulator, plain_action, register_simulator
from wfeval.config.errors import ConfigError
from wfeval.storage import layout
from wfeval.storage.artifacts import ArtifactStore
from wfeval.storage.recordings import FORMAT, RecordingCache, artifact_entry, artifact_ref
from wfeval.tasks.probing import ProbeEpisode
from wfeval.utils.hashing import canonical_json, sha256_json

RESIZE_FILTER = "area (exact box average, round half up; wfeval.benchmarks.recorded.resize)"


def _positive(name: str, value: Any, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < minimum:
        raise ConfigError(f"benchmark.{name} must be an integer >= {minimum}, got {value!r}")
    return value


class RecordedBenchmark:
    """Base adapter; a family sets :attr:`family` and passes its pinned ``env`` config."""

    family = ""
    simulator_module: Any = None  # the family's simulator module (make, identity, action_names)
    option_schemas: dict[str, Any] = {"policy": Policy}  # the behaviour policy's options
    policy_class = Policy  # a family may extend the behaviour policies (e.g. one acting on the game's state)

    def __init_subclass__(cls, **kwargs: Any) -> None:
        super().__init_subclass__(**kwargs)
        if cls.family and cls.simulator_module is not None:  # the game baselines find it by family
            register_simulator(cls.family, cls.simulator_module)

    def __init__(
        self,
        *,
        env: Mapping[str, Any],
        name: str,
        version: str = "1.0",
        description: str = "",
        splits: Sequence[str] = ("test",),
        split: str = "test",
        seed: int = 0,
        num_trajectories: int = 8,
        windows_per_trajectory: int = 4,
        warmup_steps: int = 0,
        context_frames: int = 4,
        horizon: int = 16,
        fps: float = 15.0,
        resize: Sequence[int] | None = None,
        policy: Mapping[str, Any] | None = None,
        cache: bool = True,
        cache_dir: str | None = None,
        metrics: Sequence[str] = (),  # metric ids, each optionally pinned: psnr==1.0
        tags: Sequence[str] = (),
    ):
        if split not in splits:
            raise ConfigError(f"benchmark.split: {split!r} is not one of benchmark.splits {list(splits)}")
        self.num_trajectories = _positive("num_trajectories", num_trajectories)
        self.windows_per_trajectory = _positive("windows_per_trajectory", windows_per_trajectory)
        self.warmup_steps = _positive("warmup_steps", warmup_steps, 0)
        self.context_frames = _positive("context_frames", context_frames)
        self.horizon = _positive("horizon", horizon)
        if resize is not None and (len(resize) != 2 or not all(isinstance(n, int) and n > 0 for n in resize)):
            raise ConfigError(f"benchmark.resize must be null (native) or [height, width], got {resize!r}")
        try:
            self.policy = self.policy_class(**dict(policy or {}))
        except (TypeError, ValueError) as exc:
            raise ConfigError(str(exc) if "benchmark." in str(exc) else f"benchmark.policy: {exc}") from exc
        self.split, self.seed, self.fps = split, int(seed), float(fps)
        self.resize = None if resize is None else [int(n) for n in resize]
        self.cache, self.cache_dir = bool(cache), cache_dir
        self.env = dict(env)
        module = self.simulator_module
        self.identity = module.identity(self.env)
        self.action_names = tuple(module.action_names(self.env))
        # a continuous family declares its space (shape, bounds); a discrete one has ids into action_names
        self.action_space = module.action_space(self.env) if hasattr(module, "action_space") else None
        try:
            self.policy.check(self.num_trajectories, self.n_steps, len(self.action_names))
            self.policy_identity = self.policy.identity()
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        self._module = module
        self._simulator: Simulator | None = None
        self._trajectories: dict[int, dict[str, Any]] = {}
        self._keys: dict[int, str] = {}
        self.stats: dict[str, Any] = {"recorded": 0, "cached": 0, "steps": 0, "seconds": 0.0, "rebuilt": []}
        self.spec = BenchmarkSpec(
            name=name,
            version=str(version),
            description=description,
            splits=tuple(splits),
            metrics=metric_specs(metrics),
            tags=tuple(tags),
            action_space=self.action_space,
            metadata={"family": self.family, "split": split, "num_samples": len(self.records()),
                      "context_frames": self.context_frames, "horizon": self.horizon},
        )
        self.runtime = RecordingRuntime(self)
        self.scorer = RecordingScorer(self)

    # -- layout --------------------------------------------------------------------------------

    @property
    def n_steps(self) -> int:
        """Actions per trajectory (one frame more than that is rendered)."""
        return self.warmup_steps + self.windows_per_trajectory * (self.context_frames + self.horizon) - 1

    def window_start(self, window: int) -> int:
        return self.warmup_steps + window * (self.context_frames + self.horizon)

    def trajectory_seed(self, trajectory: int) -> int:
        digest = hashlib.sha256(f"{self.seed}/{self.split}/{trajectory}".encode()).digest()
        return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF

    def sample_id(self, trajectory: int, window: int) -> str:
        return f"{self.spec.name}-{self.split}-{trajectory:04d}-{window:02d}"

    def records(self) -> list[tuple[int, int]]:
        """Cheap sample records ``(trajectory, window)`` in order; nothing is simulated."""
        return [(t, w) for t in range(self.num_trajectories) for w in range(self.windows_per_trajectory)]

    def recording_config(self) -> dict[str, Any]:
        """Everything one trajectory's frames depend on, except its index."""
        return {
            "format": FORMAT, "family": self.family, "env": self.env, "identity": self.identity,
            "resize": self.resize, "resize_filter": RESIZE_FILTER if self.resize else None,
            "policy": self.policy_identity, "seed": self.seed, "split": self.split,
            "warmup_steps": self.warmup_steps, "windows_per_trajectory": self.windows_per_trajectory,
            "context_frames": self.context_frames, "horizon": self.horizon,
        }

    def recording_key(self, trajectory: int) -> str:
        if trajectory not in self._keys:
            self._keys[trajectory] = sha256_json({**self.recording_config(), "trajectory": trajectory})
        return self._keys[trajectory]

    # -- recording -----------------------------------------------------------------------------

    def simulator(self) -> Simulator:
        if self._simulator is None:
            self._simulator = self._module.make(self.env)
        return self._simulator

    def close(self) -> None:
        close = getattr(self._simulator, "close", None)
        if callable(close):
            close()
        self._simulator = None

    def record(self, trajectory: int, store: ArtifactStore) -> dict[str, Any]:
        """Simulate one trajectory, store its window frames, return its index (nothing is cached here)."""
        started = time.perf_counter()
        sim = self.simulator()
        seed = self.trajectory_seed(trajectory)
        actor = self.policy.actor(seed, trajectory, self.n_steps, len(self.action_names))
        starts = [self.window_start(j) for j in range(self.windows_per_trajectory)]
        needed = {k for s in starts for k in range(s, s + self.context_frames + self.horizon)}
        boundary = {s + self.context_frames - 1: j for j, s in enumerate(starts)}
        frames: dict[int, np.ndarray] = {}
        first = sim.reset(seed)
        if 0 in needed:
            frames[0] = first
        steps, snapshots, actions = [], {}, []
        for t in range(self.n_steps):
            if t in boundary:
                snapshots[boundary[t]] = sim.snapshot()
            action = plain_action(actor(t, sim))
            actions.append(action)
            step = sim.step(action)
            steps.append(step)
            if t + 1 in needed:
                frames[t + 1] = step.frame
        keys = sorted(frames)
        resized = dict(zip(keys, area_resize(np.stack([frames[k] for k in keys]), self.resize)))
        windows = []
        for j, s in enumerate(starts):
            b = s + self.context_frames - 1
            context = np.stack([resized[k] for k in range(s, b + 1)])
            reference = np.stack([resized[k] for k in range(b, b + self.horizon + 1)])
            future = steps[b:b + self.horizon]
            info_keys = sorted({k for st in future for k in st.info})
            windows.append({
                "window": j,
                "start_step": s,
                "image": artifact_entry(store.put_array(context[-1], kind="image")),
                "context": artifact_entry(store.put_array(context, kind="video")),
                "reference": artifact_entry(store.put_array(reference, kind="video")),
                "context_actions": list(actions[s:b]),
                "actions": list(actions[b:b + self.horizon]),
                "context_rewards": [float(st.reward) for st in steps[s:b]],
                "rewards": [float(st.reward) for st in future],
                "terminated": [bool(st.terminated) for st in future],
                "truncated": [bool(st.truncated) for st in future],
                "info": {k: [st.info.get(k) for st in future] for k in info_keys},
                "state": snapshots[j],
            })
        seconds = time.perf_counter() - started
        self.stats["recorded"] += 1
        self.stats["steps"] += len(actions)
        self.stats["seconds"] += seconds
        return {
            "format": FORMAT, "key": self.recording_key(trajectory), "family": self.family,
            "trajectory": trajectory, "trajectory_seed": seed, "steps": len(actions),
            "action_names": list(self.action_names), "windows": windows,
        }

    def trajectory(self, trajectory: int, store: ArtifactStore) -> dict[str, Any]:
        """The trajectory's index: from memory, else the cache (if its frames are in ``store``), else recorded."""
        if trajectory in self._trajectories:
            return self._trajectories[trajectory]
        key = self.recording_key(trajectory)
        cache = RecordingCache(self.cache_dir or layout.folder(store.root, layout.RECORDINGS) / self.family,
                               store=store) if self.cache else None
        index = cache.load(key, read=lambda found: _with_frames(found, store)) if cache else None
        if index is not None:
            self.stats["cached"] += 1
        else:
            if cache and key in cache.refused:  # an edited or damaged index is never trusted: recorded again
                self.stats["rebuilt"].append(cache.refused[key])
                logging.getLogger(__name__).warning("recording index refused, recording the trajectory again: %s",
                                                    cache.refused[key])
            index = self.record(trajectory, store)
            if cache:
                cache.save(key, index)
        self._trajectories[trajectory] = index
        return index

    # -- requests ------------------------------------------------------------------------------

    def materialize(self, record: tuple[int, int], *, store: ArtifactStore, task: WorldTaskConfig,
                    protocol: EvaluationProtocolSpec) -> GenerationRequest:
        trajectory, window = record
        index = self.trajectory(trajectory, store)
        w = index["windows"][window]
        ends = [k + 1 for k, (a, b) in enumerate(zip(w["terminated"], w["truncated"])) if a or b]
        metadata = {
            "family": self.family,
            **self.sample_metadata(),
            "trajectory": trajectory,
            "window": window,
            "trajectory_seed": index["trajectory_seed"],
            "start_step": w["start_step"],
            "context_frames": self.context_frames,
            "horizon": self.horizon,
            "rewards": w["rewards"],
            "return": float(sum(w["rewards"])),
            "terminated": w["terminated"],
            "truncated": w["truncated"],
            "episode_ends": ends,  # indices into the reference video of frames that end an episode
            "context_rewards": w["context_rewards"],
            **({"step_info": w["info"]} if w["info"] else {}),
            "recording_key": index["key"],
            "simulator": {"family": self.family, "config": self.env, "resize": self.resize, "state": w["state"]},
        }
        return GenerationRequest(
            sample_id=self.sample_id(trajectory, window),
            task_id=task.task_id,
            benchmark_id=self.spec.benchmark_id,
            split=self.split,
            protocol=protocol.name,
            inputs={"image": artifact_ref(w["image"], store), "context": artifact_ref(w["context"], store)},
            controls={"actions": w["actions"], "action_names": list(index["action_names"]),
                      "context_actions": w["context_actions"],
                      **({"action_space": self.action_space.to_dict()} if self.action_space is not None else {})},
            references={"video": artifact_ref(w["reference"], store)},
            generation={**dict(task.generation_defaults), "fps": self.fps, "num_frames": self.horizon + 1,
                        "context_frames": self.context_frames},
            metadata=metadata,
        )

    def requests(self, *, store: ArtifactStore, task: WorldTaskConfig,
                 protocol: EvaluationProtocolSpec) -> list[GenerationRequest]:
        return [self.materialize(r, store=store, task=task, protocol=protocol) for r in self.records()]

    def simulate(self, request: GenerationRequest, actions: Sequence[int]) -> tuple[np.ndarray, dict[str, Any]]:
        """The real game continued from the sample's saved state under ``actions`` (closed loop
        replays the chosen actions here to make the reference): the video (initial frame first)
        and the rewards and episode ends of those steps, as the recording stores them."""
        info = request.metadata["simulator"]
        sim = self.simulator()
        sim.restore(info["state"])
        steps = [sim.step(plain_action(a)) for a in actions]
        first = np.asarray(initial_frame_of(request))[None]
        video = first if not steps else np.concatenate([first, area_resize(np.stack([s.frame for s in steps]),
                                                                           info.get("resize"))])
        terminated = [bool(s.terminated) for s in steps]
        truncated = [bool(s.truncated) for s in steps]
        info_keys = sorted({k for s in steps for k in s.info})
        return video, {"step_info": {k: [s.info.get(k) for s in steps] for k in info_keys},"rewards": [float(s.reward) for s in steps], "return": float(sum(s.reward for s in steps)),
                       "terminated": terminated, "truncated": truncated,
                       "episode_ends": [k + 1 for k, (a, b) in enumerate(zip(terminated, truncated)) if a or b]}

    # -- task=policy_evaluation (wfeval.tasks.policy_evaluation.PolicyEvaluationFamily): tracking the
    # recorded demonstration (wfeval.benchmarks.recorded.policy_evaluation) -------------------------

    def scripted_policies(self) -> dict[str, Any]:
        """Policies of known skill at tracking the demonstration, best first."""
        from wfeval.benchmarks.recorded import policy_evaluation

        return policy_evaluation.scripted_policies()

    def policy_environment(self, request: GenerationRequest) -> Any:
        from wfeval.benchmarks.recorded import policy_evaluation

        return policy_evaluation.TrackingEnvironment(self, request)

    #: task=policy_evaluation: the objective (following the recorded demonstration) is read off the frames,
    #: never the game reward a model reports (a different quantity: the score)
    objective_from_frames = True

    def frame_reward(self, request: GenerationRequest, previous: Any, frame: Any, step: int) -> tuple[float, bool]:
        """The tracking reward of a model's frame ``step`` (its episode never ends early)."""
        from wfeval.benchmarks.recorded import policy_evaluation

        cached = getattr(self, "_demo", None)
        if cached is None or cached[0] != request.sample_id:
            cached = self._demo = (request.sample_id, policy_evaluation.demonstration(request))
        return policy_evaluation.tracking_reward(cached[1], frame, step), False

    def policy_settings(self, request: GenerationRequest) -> Mapping[str, Any]:
        from wfeval.benchmarks.recorded import policy_evaluation

        return policy_evaluation.settings(request)

    # -- task=probing: the exact state of every frame (a family whose simulator has state()) -----------

    def _probe_run(self, sim: Any, actions: Sequence[int]) -> ProbeEpisode:
        frames, states = [sim_frame(sim)], [list(sim.state())]
        for a in actions:
            frames.append(sim.step(plain_action(a)).frame)
            states.append(list(sim.state()))
        return ProbeEpisode(frames=area_resize(np.stack(frames), self.resize), actions=tuple(plain_action(a) for a in actions),
                            states=np.asarray(states, dtype=np.float64))

    def probe_episode(self, request: GenerationRequest) -> ProbeEpisode:
        """The sample's window from its saved state, with the state read off the simulator per frame."""
        sim = self.simulator()
        sim.restore(request.metadata["simulator"]["state"])
        return self._probe_run(sim, request.controls["actions"])

    def probe_training(self, count: int, num_frames: int) -> list[ProbeEpisode]:
        """``count`` training episodes recorded as the evaluation samples are (the behaviour policy,
        the warm-up, the same windows: the probes see the states the samples show), from trajectories
        seeded ``sha256(seed/probe-train/i)`` (none an evaluation trajectory's). ``num_frames`` is
        the benchmark's own window (``horizon + 1`` frames) for a recorded family."""
        taken = {self._seed_of(s, t) for s in self.spec.splits for t in range(self.num_trajectories)}
        sim, out, i = self.simulator(), [], 0
        while len(out) < count:
            seed = self._seed_of("probe-train", i)
            i += 1
            if seed in taken:
                continue
            actor = self.policy.actor(seed, i - 1, self.n_steps, len(self.action_names))
            sim.reset(seed)
            frames, states, actions = [sim_frame(sim)], [list(sim.state())], []
            for t in range(self.n_steps):
                actions.append(plain_action(actor(t, sim)))
                frames.append(sim.step(actions[-1]).frame)
                states.append(list(sim.state()))
            for j in range(self.windows_per_trajectory):
                b = self.window_start(j) + self.context_frames - 1
                if len(out) < count:
                    out.append(ProbeEpisode(frames=area_resize(np.stack(frames[b:b + self.horizon + 1]), self.resize),
                                            actions=tuple(actions[b:b + self.horizon]),
                                            states=np.asarray(states[b:b + self.horizon + 1], dtype=np.float64)))
        return out

    def _seed_of(self, split: str, trajectory: int) -> int:
        digest = hashlib.sha256(f"{self.seed}/{split}/{trajectory}".encode()).digest()
        return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF

    #: protocols whose samples stay the recorded windows even when ``task.data`` has a goal:
    #: policy evaluation tracks the recorded demonstration (the goal of its task data is gridworld's)
    WINDOW_PROTOCOLS = ("policy_evaluation",)

    def task_goal(self, task: WorldTaskConfig, protocol: EvaluationProtocolSpec) -> Mapping[str, Any] | None:
        """``task.data.goal`` when the protocol's samples are goal samples (goal reaching, behavioural
        fidelity), else None: a family with goals (orby, pusht) makes a goal request only of these."""
        goal = (task.data or {}).get("goal")
        return goal if goal and protocol.name not in self.WINDOW_PROTOCOLS else None

    def sample_metadata(self) -> dict[str, Any]:
        """Family fields added to every sample's metadata (e.g. the game)."""
        return {}

    def fingerprint(self) -> dict[str, Any]:
        recorded = {str(t): hashlib.sha256(canonical_json(i).encode()).hexdigest()
                    for t, i in sorted(self._trajectories.items())}
        return {
            **self.recording_config(),
            "num_trajectories": self.num_trajectories,
            "action_names": list(self.action_names),
            "fps": self.fps,
            "recordings": {t: self._trajectories[int(t)]["key"] for t in recorded},
            "recording_sha256": sha256_json(recorded) if recorded else None,
        }


def sim_frame(sim: Any) -> np.ndarray:
    """The simulator's present frame (after reset or restore)."""
    return np.asarray(sim.frame())


def initial_frame_of(request: GenerationRequest) -> np.ndarray:
    from wfeval.storage.artifacts import read_array

    return read_array(request.inputs["image"])


def _with_frames(index: dict[str, Any], store: ArtifactStore) -> dict[str, Any] | None:
    """A cached index whose frames are all still in ``store``, else None (recorded again)."""
    frames = [w[k]["sha256"] for w in index["windows"] for k in ("image", "context", "reference")]
    return index if all(store.object_path(name).exists() for name in frames) else None
