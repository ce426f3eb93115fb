"""Structured-config schemas of the episode readers (``schema/benchmark/{lerobot,hdf5,video_actions}``).

No heavy imports: loaded by ``python -m wfeval --help`` (through :mod:`wfeval.benchmarks.schemas`).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List, Optional

from omegaconf import MISSING

from wfeval.config.schema import BenchmarkRulesSchema


@dataclass
class EpisodeLimitsSchema:
    """What one sample's files may make wfeval decode (see wfeval/io/_limits.py; null: the default)."""

    max_frame_pixels: Optional[int] = None
    max_frames: Optional[int] = None
    max_video_pixels: Optional[int] = None
    max_array_bytes: Optional[int] = None
    max_actions: Optional[int] = None


@dataclass
class EpisodeBenchmarkSchema(BenchmarkRulesSchema):
    """Options every episode reader shares (wfeval.benchmarks.episodes.base.EpisodeBenchmark)."""

    dataset_root: str = MISSING  # the dataset folder (hdf5: the file)
    name: Optional[str] = None  # default: the folder's (file's) name
    version: Optional[str] = None
    description: str = ""
    split: Optional[str] = None  # null: every split
    episodes: List[str] = field(default_factory=list)  # episode names or shell patterns; empty: all
    context_frames: int = 1  # frames the model is given (inputs.context when > 1; inputs.image is the last)
    horizon: int = 16  # actions per sample; the reference has horizon + 1 frames
    stride: Optional[int] = None  # frames between window starts; null: context_frames + horizon (no overlap)
    max_windows_per_episode: Optional[int] = None  # null: every window that fits
    fps: Optional[float] = None  # null: the dataset's own (lerobot: info.json; video_actions: the videos)
    action_low: Optional[List[float]] = None  # declared bounds of continuous actions: one value, or one per element
    action_high: Optional[List[float]] = None
    strict: bool = False  # refuse the whole dataset on any problem (found before generation)
    limits: EpisodeLimitsSchema = field(default_factory=EpisodeLimitsSchema)
    metrics: List[str] = field(default_factory=list)
    tags: List[str] = field(default_factory=list)


@dataclass
class LeRobotBenchmarkSchema(EpisodeBenchmarkSchema):
    _target_: str = "wfeval.benchmarks.episodes.LeRobotBenchmark"
    camera: Optional[str] = None  # a video feature of meta/info.json; null: the only one
    action_key: str = "action"
    tolerance_s: float = 1e-4  # a frame's time may differ this much from the one asked (LeRobot's default)


@dataclass
class HDF5BenchmarkSchema(EpisodeBenchmarkSchema):
    _target_: str = "wfeval.benchmarks.episodes.HDF5Benchmark"
    camera: Optional[str] = None  # the frames' dataset under <group>/<episode>/<obs_group>/; null: the only one
    action_key: str = "actions"
    group: str = "data"
    obs_group: str = "obs"


@dataclass
class VideoActionsBenchmarkSchema(EpisodeBenchmarkSchema):
    _target_: str = "wfeval.benchmarks.episodes.VideoActionsBenchmark"
    actions_suffix: str = ".npy"


SCHEMAS = {"lerobot": LeRobotBenchmarkSchema, "hdf5": HDF5BenchmarkSchema,
           "video_actions": VideoActionsBenchmarkSchema}
