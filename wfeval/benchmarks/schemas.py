"""Structured-config schemas of the built-in benchmark options (``schema/benchmark/<name>``).

No heavy imports here: this module is loaded by ``python -m wfeval --help``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List

from wfeval.config.schema import BenchmarkRulesSchema


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


SCHEMAS = {"gridworld": GridworldBenchmarkSchema}
