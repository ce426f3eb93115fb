"""The built-in gridworld benchmark: seeded episodes of the procedural world as requests."""

from __future__ import annotations

import hashlib
from typing import Any, Mapping, Sequence

import numpy as np

from wfeval.api import BenchmarkSpec, EvaluationProtocolSpec, GenerationRequest, WorldTaskConfig
from wfeval.benchmarks.base import metric_specs
from wfeval.benchmarks.gridworld import world
from wfeval.storage.artifacts import ArtifactStore
from wfeval.tasks.memory import RevisitPlan, check_gaps, memory_request
from wfeval.tasks.probing import probe_frames


class GridworldBenchmark:
    """``num_samples`` episodes per split; episode ``i`` of split ``s`` is seeded from (seed, s, i)."""

    option_schemas = {"world": world.WorldSpec}  # benchmark.world is checked against the world's spec
    goal_spaces = ("pixels", "latent")  # task=goal_reaching: the locator's pixels, or a latent model's space

    def __init__(
        self,
        name: str = "gridworld",
        version: str = "1.0",
        description: str = "",
        splits: Sequence[str] = ("test",),
        split: str = "test",
        num_samples: int = 32,
        seed: int = 1234,
        num_frames: int = 16,
        fps: int = 8,
        action_repeat: float = 0.5,
        world: Mapping[str, Any] | None = None,
        metrics: Sequence[str] = (),  # metric ids, each optionally pinned: psnr==1.0
        tags: Sequence[str] = (),
        memory_gaps: Sequence[int] = (2, 4, 8, 16),  # task=memory's gaps when task.data.memory.gaps is null
    ):
        if split not in splits:
            raise ValueError(f"benchmark.split: {split!r} is not one of benchmark.splits {list(splits)}")
        self.memory_gaps = check_gaps(memory_gaps, "benchmark.memory_gaps")
        if num_samples < 1:
            raise ValueError(f"benchmark.num_samples must be >= 1, got {num_samples}")
        if num_frames < 2:
            raise ValueError(f"benchmark.num_frames must be >= 2 (initial frame + 1 step), got {num_frames}")
        self.split = split
        self.num_samples = num_samples
        self.seed = seed
        self.num_frames = num_frames
        self.fps = fps
        self.action_repeat = action_repeat
        self.world_spec = _world_spec(world or {})
        _check_size(num_frames, self.world_spec)
        self.spec = BenchmarkSpec(
            name=name,
            version=version,
            description=description,
            splits=tuple(splits),
            metrics=metric_specs(metrics),
            tags=tuple(tags),
            metadata={"family": "gridworld", "split": split, "num_samples": num_samples},
        )

    def _episode_seed(self, index: int) -> int:
        digest = hashlib.sha256(f"{self.seed}/{self.split}/{index}".encode()).digest()
        return int.from_bytes(digest[:4], "little")

    def sample_id(self, index: int) -> str:
        return f"{self.spec.name}-{self.split}-{index:05d}"

    def records(self) -> "EpisodeRecords":
        """Cheap sample records (index, sample id), in order; nothing is rendered or stored, and
        nothing is held per sample (a lazy sequence: 100k samples cost no memory before they run)."""
        return EpisodeRecords(self, range(self.num_samples))

    def materialize(
        self, record: tuple[int, str], *, store: ArtifactStore, task: WorldTaskConfig,
        protocol: EvaluationProtocolSpec,
    ) -> GenerationRequest:
        """Render one episode, store its initial frame and reference video, build its request."""
        index, sample_id = record
        episode_seed = self._episode_seed(index)
        state = world.initial_state(episode_seed, self.world_spec)
        num_frames = probe_frames(task, self.num_frames)
        actions = world.sample_actions(episode_seed + 1, num_frames - 1, p_repeat=self.action_repeat)
        video, positions = world.rollout(state, actions)
        goal = (task.data or {}).get("goal")  # task=goal_reaching: a goal cell at a path distance
        extra_inputs, extra_meta = {}, {}
        if goal:
            extra_meta["goal"] = goal_for(state, episode_seed, **dict(goal))
            extra_inputs["goal_image"] = store.put_array(world.render(_agent_at(state, extra_meta["goal"]["cell"])),
                                                         kind="image")
        if goal:  # a start and a goal: no script, no reference (the planner's actions, replayed, give both)
            return GenerationRequest(
                sample_id=sample_id, task_id=task.task_id, benchmark_id=self.spec.benchmark_id, split=self.split,
                protocol=protocol.name, inputs={"image": store.put_array(video[0], kind="image"), **extra_inputs},
                controls={"action_names": world.ACTIONS},
                generation={**dict(task.generation_defaults), "fps": self.fps},
                metadata={"world": state.to_dict(), "episode_seed": episode_seed, **extra_meta},
            )
        request = GenerationRequest(
            sample_id=sample_id,
            task_id=task.task_id,
            benchmark_id=self.spec.benchmark_id,
            split=self.split,
            protocol=protocol.name,
            inputs={"image": store.put_array(video[0], kind="image")},
            controls={"actions": actions, "action_names": world.ACTIONS},
            references={"video": store.put_array(video, kind="video")},
            generation={**dict(task.generation_defaults), "fps": self.fps, "num_frames": num_frames},
            metadata={
                "world": state.to_dict(),
                "agent_positions": positions.tolist(),
                "episode_seed": episode_seed,
            },
        )
        memory = (task.data or {}).get("memory")  # task=memory: a trajectory that leaves and comes back
        return memory_request(self, request, store=store, memory=memory) if memory else request

    def requests(
        self, *, store: ArtifactStore, task: WorldTaskConfig, protocol: EvaluationProtocolSpec
    ) -> list[GenerationRequest]:
        return [self.materialize(r, store=store, task=task, protocol=protocol) for r in self.records()]

    def simulate(self, request: GenerationRequest, actions: Sequence[int]) -> tuple[Any, dict[str, Any]]:
        """The true world from the sample's start under ``actions`` (closed loop and planning
        replay the chosen actions here to make the reference): the video and the true track."""
        video, positions = world.rollout(world.WorldState.from_dict(request.metadata["world"]), actions)
        return video, {"agent_positions": positions.tolist()}

    def revisit_plan(self, request: GenerationRequest, gaps: Sequence[int]) -> RevisitPlan:
        """task=memory: out-and-back walks from the start cell (:mod:`wfeval.benchmarks.gridworld.memory`)."""
        from wfeval.benchmarks.gridworld import memory

        return memory.revisit_plan(request, gaps)

    def static_masks(self, request: GenerationRequest, actions: Sequence[int]) -> Any:
        """Per frame, the pixels that show only walls and background (not the agent, not an object)."""
        from wfeval.benchmarks.gridworld import memory

        return memory.static_masks(request, actions)

    # -- task=policy_evaluation (wfeval.tasks.policy_evaluation.PolicyEvaluationFamily) ---------------

    def scripted_policies(self) -> dict[str, Any]:
        """Goal-reaching policies of different skill, best first (:mod:`wfeval.benchmarks.gridworld.policies`)."""
        from wfeval.benchmarks.gridworld import policies

        return policies.scripted_policies()

    def policy_environment(self, request: GenerationRequest) -> Any:
        from wfeval.benchmarks.gridworld import policies

        return policies.PolicyEnvironment(request)

    def frame_reward(self, request: GenerationRequest, previous: Any, frame: Any, step: int) -> tuple[float, bool]:
        from wfeval.benchmarks.gridworld import policies

        return policies.frame_reward(request, previous, frame)

    def policy_settings(self, request: GenerationRequest) -> Mapping[str, Any]:
        from wfeval.benchmarks.gridworld import policies

        return policies.settings(request)

    # -- task=policy_optimization (wfeval.tasks.policy_optimization.PolicyOptimizationFamily) -----------

    def optimization_observer(self, request: GenerationRequest) -> Any:
        from wfeval.benchmarks.gridworld import optimization

        return optimization.observer(request)

    def optimization_reward(self, request: GenerationRequest, previous: Any, frame: Any) -> tuple[float, bool]:
        from wfeval.benchmarks.gridworld import policies

        return policies.frame_reward(request, previous, frame)

    def optimization_environment(self, request: GenerationRequest) -> Any:
        from wfeval.benchmarks.gridworld import optimization

        return optimization.Environment(request)

    def optimization_defaults(self, request: GenerationRequest) -> Mapping[str, Any]:
        from wfeval.benchmarks.gridworld import optimization

        return optimization.defaults(request)

    def environment(self, request: GenerationRequest) -> "GoalEnvironment":
        """The true world of a goal-reaching sample, for a planner to act in (protocol=planning)."""
        if "goal" not in request.metadata:
            raise ValueError(f"sample {request.sample_id!r} has no goal: planning runs with task=goal_reaching")
        return GoalEnvironment(request)

    def state_variables(self) -> tuple:
        """task=probing: the exact state per frame (wfeval/benchmarks/gridworld/probing.py)."""
        from wfeval.benchmarks.gridworld import probing

        return probing.VARIABLES

    # -- task=behavioural_fidelity (wfeval.tasks.behavioural_fidelity): the same goal episodes ----------

    def fidelity_policies(self) -> dict[str, Any]:
        """The policies that locate the agent in the frame they see, best first."""
        from wfeval.benchmarks.gridworld import policies

        return {name: p for name, p in policies.scripted_policies().items() if name in policies.PERCEIVING}

    def fidelity_environment(self, request: GenerationRequest) -> Any:
        return self.policy_environment(request)

    def fidelity_settings(self, request: GenerationRequest) -> Mapping[str, Any]:
        return self.policy_settings(request)

    def fidelity_reward(self, request: GenerationRequest, previous: Any, frame: Any) -> tuple[float, bool]:
        from wfeval.benchmarks.gridworld import policies

        return policies.frame_reward(request, previous, frame)

    def probe_episode(self, request: GenerationRequest) -> Any:
        from wfeval.benchmarks.gridworld import probing

        return probing.episode(world.WorldState.from_dict(request.metadata["world"]), request.controls["actions"])

    def probe_training(self, count: int, num_frames: int) -> list:
        """Training episodes for the probes, seeded apart from every split's evaluation samples."""
        from wfeval.benchmarks.gridworld import probing

        taken = {int.from_bytes(hashlib.sha256(f"{self.seed}/{s}/{i}".encode()).digest()[:4], "little")
                 for s in self.spec.splits for i in range(self.num_samples)}
        return probing.training(self.seed, count, num_frames, self.world_spec, taken, self.action_repeat)

    def fingerprint(self) -> dict[str, Any]:
        return {
            "family": "gridworld",
            "generator": "wfeval.benchmarks.gridworld.world",
            "seed": self.seed,
            "split": self.split,
            "num_samples": self.num_samples,
            "num_frames": self.num_frames,
            "world": self.world_spec.to_dict(),
        }


class EpisodeRecords(Sequence):
    """The (index, sample id) records of a range of episodes, made when asked for."""

    def __init__(self, bench: GridworldBenchmark, indices: range):
        self.bench, self.indices = bench, indices

    def __len__(self) -> int:
        return len(self.indices)

    def __getitem__(self, item: Any) -> Any:
        if isinstance(item, slice):
            return EpisodeRecords(self.bench, self.indices[item])
        index = self.indices[item]
        return index, self.bench.sample_id(index)


def _check_size(num_frames: int, spec: world.WorldSpec) -> None:
    """Refuse (before anything is rendered) videos beyond the input limits of :mod:`wfeval.io`."""
    from wfeval.io import DEFAULT_LIMITS as limits

    if num_frames > limits.max_frames:
        raise ValueError(f"benchmark.num_frames={num_frames:,} exceeds the limit of {limits.max_frames:,} frames")
    pixels = spec.height * spec.width
    if pixels > limits.max_frame_pixels or num_frames * pixels > limits.max_video_pixels:
        raise ValueError(f"benchmark.world: {spec.height}×{spec.width} frames × {num_frames} exceed the limits of "
                         f"{limits.max_frame_pixels:,} pixels per frame and {limits.max_video_pixels:,} per video")


def path_distances(state: world.WorldState) -> dict[tuple[int, int], int]:
    """Shortest number of agent moves from the agent's cell to every reachable cell (walls block)."""
    rows, cols, walls = state.spec.rows, state.spec.cols, set(state.walls)
    dist = {tuple(state.agent): 0}
    frontier = [tuple(state.agent)]
    while frontier:
        nxt = []
        for r, c in frontier:
            for dr, dc in ((-1, 0), (1, 0), (0, -1), (0, 1)):
                cell = (r + dr, c + dc)
                if 0 <= cell[0] < rows and 0 <= cell[1] < cols and cell not in walls and cell not in dist:
                    dist[cell] = dist[(r, c)] + 1
                    nxt.append(cell)
        frontier = nxt
    return dist


def goal_for(state: world.WorldState, episode_seed: int, min_distance: int = 3, max_distance: int = 6,
             max_steps: int = 16) -> dict[str, Any]:
    """A goal cell whose shortest path from the start is within [min_distance, max_distance]
    (else the farthest reachable cell), picked with a generator seeded by the episode."""
    if not 1 <= min_distance <= max_distance or max_steps < 1:
        raise ValueError(f"task.data.goal: need 1 <= min_distance <= max_distance and max_steps >= 1, got "
                         f"{min_distance}, {max_distance}, {max_steps}")
    dist = path_distances(state)
    cells = sorted(c for c, d in dist.items() if min_distance <= d <= max_distance)
    if not cells:
        far = max(dist.values())
        cells = sorted(c for c, d in dist.items() if d == far)
    rng = np.random.default_rng((episode_seed, 0x60A1))
    cell = cells[int(rng.integers(len(cells)))]
    size = state.spec.cell
    return {"cell": list(cell), "position_px": [cell[0] * size, cell[1] * size], "distance": dist[cell],
            "max_steps": int(max_steps)}


def _agent_at(state: world.WorldState, cell: Sequence[int]) -> world.WorldState:
    return world.WorldState(seed=state.seed, spec=state.spec, agent=tuple(cell), walls=state.walls,
                            objects=state.objects)


class GoalEnvironment:
    """The true gridworld of one goal-reaching sample: step it, observe it, re-ground a model on it."""

    def __init__(self, request: GenerationRequest):
        from wfeval.functional.control import ColorLocator

        self.base = request
        self.state = self.start = world.WorldState.from_dict(request.metadata["world"])
        goal = request.metadata["goal"]
        self.goal_cell = tuple(goal["cell"])
        self.goal_px = np.asarray(goal["position_px"], dtype=np.float64)
        self.max_steps = int(goal["max_steps"])
        self.optimal_steps = int(goal["distance"])
        self.n_actions = len(world.ACTIONS)
        self.locator = ColorLocator(color=world.AGENT_COLOR, size=self.state.spec.cell)
        spec = self.state.spec
        self.miss_px = float(np.hypot(spec.height, spec.width))  # agent not found in a frame
        self.reach_px = spec.cell / 2  # a located agent this close to the goal's pixel is on it (the plan audit)

    @property
    def at_goal(self) -> bool:
        return tuple(self.state.agent) == self.goal_cell

    @property
    def distance(self) -> int:
        """Cells between the agent and the goal (Manhattan)."""
        return abs(self.state.agent[0] - self.goal_cell[0]) + abs(self.state.agent[1] - self.goal_cell[1])

    def step(self, action: int) -> np.ndarray:
        self.state = world.step(self.state, int(action))
        return world.render(self.state)

    def request(self, store: ArtifactStore) -> GenerationRequest:
        """The sample re-grounded on the true current state: its image and world are the present."""
        import dataclasses

        return dataclasses.replace(self.base, inputs={**self.base.inputs,
                                                      "image": store.put_array(world.render(self.state), kind="image")},
                                   metadata={**self.base.metadata, "world": self.state.to_dict()})

    # -- latent planning (wfeval/protocols/latent_planning.py): observations, exact states, true futures --

    def frame(self) -> np.ndarray:
        return world.render(self.state)

    def goal_frame(self) -> np.ndarray:
        return world.render(_agent_at(self.start, self.goal_cell))

    def exact_state(self) -> list[float]:
        from wfeval.benchmarks.gridworld import probing

        return probing.state_row(self.state)

    def goal_state(self) -> list[float]:
        from wfeval.benchmarks.gridworld import probing

        return probing.state_row(_agent_at(self.start, self.goal_cell))

    def true_futures(self, plans: Any) -> tuple[np.ndarray, np.ndarray]:
        """Each plan run from the true present: frames N×H×h×w×3 and exact states N×H×V (probing's variables)."""
        from wfeval.benchmarks.gridworld import probing

        frames, states = [], []
        for plan in np.asarray(plans, dtype=np.int64):
            state, row_f, row_s = self.state, [], []
            for action in plan:
                state = world.step(state, int(action))
                row_f.append(world.render(state))
                row_s.append(probing.state_row(state) if state.objects else [])
            frames.append(row_f)
            states.append(row_s)
        return np.asarray(frames, dtype=np.uint8), np.asarray(states, dtype=np.float64)

    def distances(self, frames: np.ndarray) -> np.ndarray:
        """Pixels between the located agent and the goal in each frame (``miss_px`` when not found).
        Equal frames (a planner's candidates pass through the same states) are located once."""
        flat = np.ascontiguousarray(frames.reshape(-1, *frames.shape[-3:]))
        first: dict[bytes, int] = {}
        of = np.array([first.setdefault(f.tobytes(), len(first)) for f in flat], dtype=np.intp)
        unique = flat[np.unique(of, return_index=True)[1]] if len(first) < len(flat) else flat
        found = self.locator(unique)
        missing = np.array([p is None for p in found], dtype=bool)
        where = np.array([(0.0, 0.0) if p is None else p for p in found], dtype=np.float64).reshape(-1, 2)
        out = np.hypot(where[:, 0] - self.goal_px[0], where[:, 1] - self.goal_px[1])
        out[missing] = self.miss_px
        return out[of].reshape(frames.shape[:-3])


def _world_spec(params: Mapping[str, Any]) -> world.WorldSpec:
    try:
        return world.WorldSpec(**dict(params))
    except TypeError as exc:
        raise ValueError(f"benchmark.world: {exc}") from exc
