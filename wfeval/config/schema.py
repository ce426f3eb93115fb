"""Schemas that make a typo or a wrong type fail at compose time, naming the full key.

The primary config extends ``wfeval_schema``; each built-in group option extends its own schema
through ``defaults: [/schema/<group>/<name>@_here_, _self_]``. User options without a schema
are accepted as they are and checked when they are instantiated.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from hydra.core.config_store import ConfigStore
from omegaconf import MISSING


@dataclass
class TaskSchema:
    """Mirrors :class:`wfeval.api.WorldTaskConfig`."""

    name: str = MISSING
    protocol: str = "open_loop"
    evaluation_protocol: str = "reference_metrics"
    capability_track: str = "core_video"
    schema_type: str = "sample"
    input_keys: List[str] = field(default_factory=list)
    output_keys: List[str] = field(default_factory=lambda: ["generated_video"])
    metric_ids: List[str] = field(default_factory=list)
    metric_groups: List[str] = field(default_factory=list)
    tags: List[str] = field(default_factory=list)
    description: str = ""
    data: Dict[str, Any] = field(default_factory=dict)
    generation_defaults: Dict[str, Any] = field(default_factory=dict)
    metadata: Dict[str, Any] = field(default_factory=dict)


@dataclass
class ProtocolSchema:
    """An :class:`wfeval.api.EvaluationProtocolSpec`; extra fields land in its metadata."""

    name: str = MISSING
    metric_ids: List[str] = field(default_factory=list)
    metric_groups: List[str] = field(default_factory=list)
    driver: str = "open_loop"  # how generation is driven
    context_frames: int = 1  # frames of the reference handed to the model
    description: str = ""
    metadata: Dict[str, Any] = field(default_factory=dict)


@dataclass
class RunSchema:
    seed: int = 0
    store_dir: str = "outputs/store"
    from_run: Optional[str] = None  # re-score the generations of this run dir; no model is called
    limit: Optional[int] = None  # score only the first N samples
    batch_size: int = 8
    progress: str = "auto"  # auto | bar | log | off
    verify_artifacts: bool = False  # re-hash every artifact on read


@dataclass
class WfevalSchema:
    task: TaskSchema = MISSING
    benchmark: Any = MISSING
    model: Any = MISSING
    protocol: ProtocolSchema = MISSING
    metric: Dict[str, Any] = field(default_factory=dict)
    extra_metrics: List[str] = field(default_factory=list)
    run: RunSchema = field(default_factory=RunSchema)


# --- built-in group options -------------------------------------------------------------


@dataclass
class WorldSchema:
    height: int = 64
    width: int = 64
    cell: int = 8
    n_walls: int = 6
    n_objects: int = 1


@dataclass
class GridworldBenchmarkSchema:
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
class OracleModelSchema:
    _target_: str = "wfeval.models.baselines.OracleModel"
    name: str = "oracle"


@dataclass
class StaticModelSchema:
    _target_: str = "wfeval.models.baselines.StaticModel"
    name: str = "static"


@dataclass
class RandomActionsModelSchema:
    _target_: str = "wfeval.models.baselines.RandomActionsModel"
    name: str = "random_actions"
    seed: int = 0
    p_repeat: float = 0.5


@dataclass
class GeneratedRateSchema:
    _target_: str = "wfeval.metrics.basic.GeneratedRate"
    confidence: float = 0.95
    output_keys: List[str] = field(default_factory=lambda: ["generated_video"])


@dataclass
class ArtifactCountSchema:
    _target_: str = "wfeval.metrics.basic.ArtifactCount"
    confidence: float = 0.95


@dataclass
class FVDSchema:
    _target_: str = "wfeval.metrics.fvd.FVD"
    clip_length: int = 16
    resize: int = 224
    resize_mode: str = "bilinear"
    covariance: str = "N"  # N (StyleGAN-V) | N-1 (TF-GAN)


_OPTION_SCHEMAS = {
    "benchmark": {"gridworld": GridworldBenchmarkSchema},
    "model": {
        "oracle": OracleModelSchema,
        "static": StaticModelSchema,
        "random_actions": RandomActionsModelSchema,
    },
    "metric": {"generated_rate": GeneratedRateSchema, "artifact_count": ArtifactCountSchema, "fvd": FVDSchema},
}


def register_schemas() -> None:
    """Store every schema in Hydra's ConfigStore (idempotent)."""
    store = ConfigStore.instance()
    store.store(name="wfeval_schema", node=WfevalSchema)
    for group, options in _OPTION_SCHEMAS.items():
        for name, node in options.items():
            store.store(group=f"schema/{group}", name=name, node=node)
