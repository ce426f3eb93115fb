"""Memory Maze benchmarks (``benchmark=memory_maze``, ``memory_maze_long``, ``memory_maze_15x15``):
first-person 3D frames recorded offline from seeded mazes under an explore-and-revisit policy."""

from __future__ import annotations

import dataclasses
import math
from pathlib import Path
from typing import Any, Mapping, Sequence

from wfeval.api import EvaluationProtocolSpec, GenerationRequest, WorldTaskConfig
from wfeval.benchmarks.memory_maze import memory as maze_memory
from wfeval.benchmarks.memory_maze import policy as maze_policy
from wfeval.benchmarks.memory_maze import simulator
from wfeval.benchmarks.memory_maze.policy import MazePolicy
from wfeval.benchmarks.recorded.adapter import RecordedBenchmark
from wfeval.config.errors import ConfigError
from wfeval.storage import layout
from wfeval.storage.artifacts import ArtifactStore
from wfeval.tasks.memory import RevisitPlan, check_gaps, memory_request


class MemoryMazeBenchmark(RecordedBenchmark):
    """See :class:`~wfeval.benchmarks.recorded.adapter.RecordedBenchmark` for the sample layout.

    ``env`` pins the maze ``size`` (9, 11, 13 or 15 cells), the ``camera_resolution`` (64) and
    ``good_visibility``. Each trajectory is one Memory Maze episode (seeded layout, targets and
    start), so it must end before the episode's time limit (1,000 steps at 9×9, 4,000 at 15×15).
    Beside the recorded fields, ``metadata["maze"]`` holds the exact state a memory or pose measure
    needs: the layout, the targets' positions and colours, the pose at the last context frame, and
    what is not static scenery (``border_px``: the target-colour border; ``moving_objects``: none);
    ``metadata["step_info"]`` the true pose after every future step (``x``, ``y`` in cells,
    ``heading`` in radians, ``target_index``). ``memory_gaps``: the gaps (steps) ``task=memory``
    plans when ``task.data.memory.gaps`` is null (its default): a few look-away legs on the short
    configs, walks of up to 256 steps on the long one.
    """

    family = "memory_maze"
    simulator_module = simulator
    policy_class = MazePolicy
    option_schemas = {"env": simulator.DEFAULTS, "policy": MazePolicy}

    def __init__(self, env: Mapping[str, Any] | None = None, memory_gaps: Sequence[int] = (2, 4, 8, 16),
                 **options: Any):
        config = simulator.check_config(env or {})
        self.memory_gaps = check_gaps(memory_gaps, "benchmark.memory_gaps")  # task=memory's default gaps
        super().__init__(env=config, **options)
        limit = simulator.steps_per_episode(config)
        if self.n_steps >= limit:
            raise ConfigError(f"benchmark: a trajectory of {self.n_steps} steps (warmup_steps + windows_per_trajectory "
                              f"× (context_frames + horizon) − 1) does not fit in one {config['size']}×{config['size']} "
                              f"Memory Maze episode ({limit} steps); record fewer windows or a shorter horizon")

    def sample_metadata(self) -> dict[str, Any]:
        return {"game": f"memory_maze_{self.env['size']}x{self.env['size']}"}

    def materialize(self, record: tuple[int, int], *, store: ArtifactStore, task: WorldTaskConfig,
                    protocol: EvaluationProtocolSpec) -> GenerationRequest:
        request = super().materialize(record, store=store, task=task, protocol=protocol)
        state = request.metadata["simulator"]["state"]
        # what is static: the whole scene (walls, floor, targets); only the view moves with the agent,
        # and the frame's border (border_px wide) shows the current target's colour, which changes
        # when a target is reached (step_info.target_index)
        maze = {**state["maze"], "start_pose": dict(state["pose"]), "border_px": int(2 * math.sqrt(self.env["camera_resolution"] // 64)),
                "moving_objects": []}
        request = dataclasses.replace(request, metadata={**request.metadata, "maze": maze})
        memory = (task.data or {}).get("memory")  # task=memory: legs that leave a pose and come back to it
        if not memory:
            return request
        cache_root = (Path(self.cache_dir) if self.cache_dir else layout.folder(store.root, layout.RECORDINGS)) \
            / f"{self.family}-memory" if self.cache else None
        request = memory_request(self, request, store=store, memory=memory, cache_root=cache_root)
        # the ball never returns exactly: revisit_error compares the model's change with the true change
        return dataclasses.replace(request, metadata={**request.metadata, "memory": {
            **request.metadata["memory"], "measure": maze_memory.MEASURE}})

    # -- task=memory (wfeval.tasks.memory.RevisitPlanner) --------------------------------------------

    def revisit_plan(self, request: GenerationRequest, gaps: Sequence[int]) -> RevisitPlan:
        """Out-and-back legs from the sample's pose, closed loop on the true simulator
        (:mod:`wfeval.benchmarks.memory_maze.memory`)."""
        return maze_memory.revisit_plan(self.simulator(), request, gaps)

    def memory_cache_key(self, request: GenerationRequest, gaps: Sequence[int]) -> str:
        """Everything a planned memory sample depends on: the recording (its content key names the
        simulator, its config and versions, the policy, the seeds), the window, the gaps, and the
        code that plans and replays it (the sources of the planner, the simulator and the action set:
        an edited planner never reuses a plan)."""
        from wfeval.utils.hashing import file_sha256, sha256_json

        code = {Path(m.__file__).name: file_sha256(m.__file__, cached=True)
                for m in (maze_memory, simulator, maze_policy)}
        return sha256_json({"format": "memory_maze.memory/1", "recording_key": request.metadata["recording_key"],
                            "sample_id": request.sample_id, "window": request.metadata["window"],
                            "gaps": [int(g) for g in gaps], "code": code})

    def static_masks(self, request: GenerationRequest, actions: Sequence[int]) -> Any:
        """Per frame, the whole view but the target-colour border (nothing in the maze moves)."""
        return maze_memory.static_masks(request, actions)
