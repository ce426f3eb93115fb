"""Structured-config schemas of the built-in benchmark options (``schema/benchmark/<name>``).

No heavy imports here: this module is loaded by ``python -m wfeval --help``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

from omegaconf import MISSING

from wfeval.config.schema import BenchmarkRulesSchema, store_schema


@dataclass
class WorldSchema:
    height: int = 64
    width: int = 64
    cell: int = 8
    n_walls: int = 6
    n_objects: int = 1


@dataclass
class GridworldBenchmarkSchema(BenchmarkRulesSchema):
    _target_: str = "wfeval.benchmarks.gridworld.GridworldBenchmark"
    name: str = "gridworld"
    version: str = "1.0"
    description: str = ""
    splits: List[str] = field(default_factory=lambda: ["test"])
    split: str = "test"
    num_samples: int = 32
    seed: int = 1234
    num_frames: int = 16
    fps: int = 8
    action_repeat: float = 0.5
    world: WorldSchema = field(default_factory=WorldSchema)
    metrics: List[str] = field(default_factory=list)
    tags: List[str] = field(default_factory=list)


@dataclass
class InputLimitsSchema:
    """What one sample's files may make wfeval decode (an absurd file is that sample's input error)."""

    max_frame_pixels: Optional[int] = None  # default 8192 x 8192
    max_frames: Optional[int] = None  # default 100000
    max_video_pixels: Optional[int] = None  # default 2**30 decoded pixels
    max_array_bytes: Optional[int] = None  # default 4 GiB, read from a .npy header
    max_actions: Optional[int] = None  # default 100000


@dataclass
class FolderBenchmarkSchema(BenchmarkRulesSchema):
    """A dataset folder (docs/dataset-folder.md): ``manifest.jsonl`` + files under ``dataset_root``."""

    _target_: str = "wfeval.benchmarks.folder.FolderBenchmark"
    dataset_root: str = MISSING
    name: Optional[str] = None  # default: dataset.json's name, else the folder's name
    version: Optional[str] = None  # default: dataset.json's version, else "1.0"
    description: str = ""
    split: Optional[str] = None  # null: every split
    subset: List[str] = field(default_factory=list)  # sample ids or shell patterns; empty: all
    fps: float = 8.0  # when neither the line nor dataset.json gives one
    strict: bool = False  # refuse the whole dataset on any problem (found before generation)
    check_complete: bool = True  # a video shorter than its container declares is unreadable
    follow_symlinks: bool = False  # read files whose symlinks lead outside dataset_root
    # input limits (null: the default of wfeval/io/_limits.py), e.g. benchmark.limits.max_frames=200000
    limits: InputLimitsSchema = field(default_factory=lambda: InputLimitsSchema())
    metrics: List[str] = field(default_factory=list)
    tags: List[str] = field(default_factory=list)



# --- simulator-recorded families (wfeval/benchmarks/recorded, atari, crafter, memory_maze; docs/games.md) ------


@dataclass
class RecordingPolicySchema:
    kind: str = "sticky"  # uniform | sticky | file
    repeat_probability: float = 0.5  # sticky: chance of repeating the previous action
    path: Optional[str] = None  # file: JSON list of action lists (or 2-D .npy), one row per trajectory


@dataclass
class RecordedBenchmarkSchema(BenchmarkRulesSchema):
    """Fields every recorded family shares (wfeval.benchmarks.recorded.adapter.RecordedBenchmark)."""

    name: str = MISSING
    version: str = "1.0"
    description: str = ""
    splits: List[str] = field(default_factory=lambda: ["test"])
    split: str = "test"
    seed: int = 0
    num_trajectories: int = 8
    windows_per_trajectory: int = 4  # samples per trajectory, one after the other
    warmup_steps: int = 0  # agent steps before the first window
    context_frames: int = 4  # frames the model is given (inputs.context; inputs.image is the last)
    horizon: int = 16  # frames to predict (reference video: horizon + 1 frames from the last context frame)
    fps: float = 15.0
    resize: Optional[List[int]] = None  # [height, width] (area filter) or null: native resolution
    policy: RecordingPolicySchema = field(default_factory=RecordingPolicySchema)
    cache: bool = True  # reuse recorded trajectories (keyed by content) instead of simulating again
    cache_dir: Optional[str] = None  # default: <run.store_dir>/recordings/<family>
    metrics: List[str] = field(default_factory=list)
    tags: List[str] = field(default_factory=list)


@dataclass
class AtariEnvSchema:
    game: str = "pong"  # an ale-py ROM id
    frameskip: int = 4
    repeat_action_probability: float = 0.0  # sticky actions; 0: deterministic trajectories
    full_action_space: bool = False  # false: the game's minimal action set
    mode: Optional[int] = None
    difficulty: Optional[int] = None
    max_num_frames_per_episode: int = 108000


@dataclass
class AtariBenchmarkSchema(RecordedBenchmarkSchema):
    _target_: str = "wfeval.benchmarks.atari.AtariBenchmark"
    env: AtariEnvSchema = field(default_factory=AtariEnvSchema)
    rom_md5: Optional[str] = None  # refuse another ROM dump than this one


@dataclass
class CrafterEnvSchema:
    area: List[int] = field(default_factory=lambda: [64, 64])  # world size in cells
    view: List[int] = field(default_factory=lambda: [9, 9])  # cells shown
    size: List[int] = field(default_factory=lambda: [64, 64])  # render resolution (pixels)
    length: int = 10000  # steps per episode
    reward: bool = True


@dataclass
class CrafterBenchmarkSchema(RecordedBenchmarkSchema):
    _target_: str = "wfeval.benchmarks.crafter.CrafterBenchmark"
    env: CrafterEnvSchema = field(default_factory=CrafterEnvSchema)


@dataclass
class MazePolicySchema(RecordingPolicySchema):
    kind: str = "explore_revisit"  # explore_revisit (acts on the maze's state) | uniform | sticky | file
    revisit_probability: float = 0.5  # explore_revisit: chance that a leg goes back to a place seen before
    look_probability: float = 0.2  # explore_revisit: chance that a leg ends with a full turn in place
    min_distance: int = 3  # explore_revisit: cells (shortest path) to a new leg's goal, at least


@dataclass
class MemoryMazeEnvSchema:
    size: int = 9  # 9, 11, 13 or 15 cells (Memory Maze's mazes)
    camera_resolution: int = 64
    good_visibility: bool = False


@dataclass
class MemoryMazeBenchmarkSchema(RecordedBenchmarkSchema):
    _target_: str = "wfeval.benchmarks.memory_maze.MemoryMazeBenchmark"
    env: MemoryMazeEnvSchema = field(default_factory=MemoryMazeEnvSchema)
    policy: MazePolicySchema = field(default_factory=MazePolicySchema)


SCHEMAS = {"gridworld": GridworldBenchmarkSchema, "folder": FolderBenchmarkSchema}
SCHEMAS.update({"atari": AtariBenchmarkSchema, "crafter": CrafterBenchmarkSchema,
                "memory_maze": MemoryMazeBenchmarkSchema})


def register() -> None:
    """Store each schema as ``schema/benchmark/<name>`` in Hydra's ConfigStore (built when first loaded)."""
    for name, node in SCHEMAS.items():
        store_schema("schema/benchmark", name, node)


register()
