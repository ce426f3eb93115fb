"""The built-in gridworld benchmark: seeded episodes of the procedural world as requests."""

from __future__ import annotations

import hashlib
from typing import Any, Mapping, Sequence

from wfeval.api import BenchmarkSpec, EvaluationProtocolSpec, GenerationRequest, MetricSpec, WorldTaskConfig
from wfeval.artifacts import ArtifactStore
from wfeval.benchmarks.gridworld import world


class GridworldBenchmark:
    """``num_samples`` episodes per split; episode ``i`` of split ``s`` is seeded from (seed, s, i)."""

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
        metrics: Sequence[str] = (),
        tags: Sequence[str] = (),
    ):
        if split not in splits:
            raise ValueError(f"benchmark.split: {split!r} is not one of benchmark.splits {list(splits)}")
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
            metrics=tuple(MetricSpec(id=m) for m in metrics),
            tags=tuple(tags),
            metadata={"family": "gridworld", "split": split, "num_samples": num_samples},
        )

    def _episode_seed(self, index: int) -> int:
        digest = hashlib.sha256(f"{self.seed}/{self.split}/{index}".encode()).digest()
        return int.from_bytes(digest[:4], "little")

    def sample_id(self, index: int) -> str:
        return f"{self.spec.name}-{self.split}-{index:05d}"

    def records(self) -> list[tuple[int, str]]:
        """Cheap sample records (index, sample id), in order; nothing is rendered or stored."""
        return [(index, self.sample_id(index)) for index in range(self.num_samples)]

    def materialize(
        self, record: tuple[int, str], *, store: ArtifactStore, task: WorldTaskConfig,
        protocol: EvaluationProtocolSpec,
    ) -> GenerationRequest:
        """Render one episode, store its initial frame and reference video, build its request."""
        index, sample_id = record
        episode_seed = self._episode_seed(index)
        state = world.initial_state(episode_seed, self.world_spec)
        actions = world.sample_actions(episode_seed + 1, self.num_frames - 1, p_repeat=self.action_repeat)
        video, positions = world.rollout(state, actions)
        return GenerationRequest(
            sample_id=sample_id,
            task_id=task.task_id,
            benchmark_id=self.spec.benchmark_id,
            split=self.split,
            protocol=protocol.name,
            inputs={"image": store.put_array(video[0], kind="image")},
            controls={"actions": actions, "action_names": world.ACTIONS},
            references={"video": store.put_array(video, kind="video")},
            generation={**dict(task.generation_defaults), "fps": self.fps, "num_frames": self.num_frames},
            metadata={
                "world": state.to_dict(),
                "agent_positions": positions.tolist(),
                "episode_seed": episode_seed,
            },
        )

    def requests(
        self, *, store: ArtifactStore, task: WorldTaskConfig, protocol: EvaluationProtocolSpec
    ) -> list[GenerationRequest]:
        return [self.materialize(r, store=store, task=task, protocol=protocol) for r in self.records()]

    def simulate(self, request: GenerationRequest, actions: Sequence[int]) -> tuple[Any, dict[str, Any]]:
        """The true world from the sample's start under ``actions`` (closed loop and planning
        replay the chosen actions here to make the reference): the video and the true track."""
        video, positions = world.rollout(world.WorldState.from_dict(request.metadata["world"]), actions)
        return video, {"agent_positions": positions.tolist()}

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


def _check_size(num_frames: int, spec: world.WorldSpec) -> None:
    """Refuse (before anything is rendered) videos beyond the input limits of :mod:`wfeval.io`."""
    from wfeval.io import DEFAULT_LIMITS as limits

    if num_frames > limits.max_frames:
        raise ValueError(f"benchmark.num_frames={num_frames:,} exceeds the limit of {limits.max_frames:,} frames")
    pixels = spec.height * spec.width
    if pixels > limits.max_frame_pixels or num_frames * pixels > limits.max_video_pixels:
        raise ValueError(f"benchmark.world: {spec.height}×{spec.width} frames × {num_frames} exceed the limits of "
                         f"{limits.max_frame_pixels:,} pixels per frame and {limits.max_video_pixels:,} per video")


def _world_spec(params: Mapping[str, Any]) -> world.WorldSpec:
    try:
        return world.WorldSpec(**dict(params))
    except TypeError as exc:
        raise ValueError(f"benchmark.world: {exc}") from exc
