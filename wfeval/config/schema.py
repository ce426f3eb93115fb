"""Schemas that make a typo or a wrong type fail at compose time, naming the full key.

The primary config extends ``wfeval_schema``; each built-in group option extends its own schema
through ``defaults: [/schema/<group>/<name>@_here_, _self_]``, derived from the option's class
(:mod:`wfeval.config.derive`) on top of its group's base schema here (:data:`BASE_SCHEMAS`). User
options without a schema are accepted as they are and checked when they are instantiated. This
module imports no plugin.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Optional

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
class ProtocolBaseSchema:
    """Keys every protocol option has: the :class:`wfeval.api.EvaluationProtocolSpec` the core reads;
    the protocol class never sees them (its own options are derived from its ``__init__``)."""

    name: str = MISSING
    metric_ids: List[str] = field(default_factory=list)
    metric_groups: List[str] = field(default_factory=list)
    context_frames: int = 1  # frames of the reference handed to the model
    description: str = ""
    metadata: Dict[str, Any] = field(default_factory=dict)


#: keys of a protocol option that the core reads and the protocol class never sees
PROTOCOL_CORE_KEYS = ("name", "metric_ids", "metric_groups", "context_frames", "description", "metadata")


@dataclass
class RunSchema:
    seed: int = 0
    store_dir: str = "outputs/store"
    from_run: Optional[str] = None  # re-score the generations of this run dir; no model is called
    limit: Optional[int] = None  # score only the first N samples
    shard: Optional[str] = None  # "i/n": the i-th of n contiguous slices of the samples
    batch_size: int = 8
    progress: str = "auto"  # auto | bar | log | off
    verify_artifacts: bool = False  # re-hash every artifact on read
    durable_store: bool = False  # fsync every stored artifact: survives power loss, not only kill -9
    report: bool = True  # write report.html (python -m wfeval.report) into the run folder at the end
    overlap: Any = "auto"  # score finished samples on a thread while the model generates: true | false | auto
    device: str = "auto"  # metrics' device: auto (cuda when present, else cpu) | cpu | cuda | cuda:N
    # generation controls (wfeval/pipeline/generate.py)
    seed_mode: str = "per_sample"  # per_sample: seed from (run.seed, task seed, sample id) | fixed
    sample_timeout_s: Optional[float] = None  # per sample (a batch gets N x this); null: no limit
    fail_on_error: Any = None  # null/false: keep going | true: first error | N >= 1 errors | fraction in (0, 1)
    trust: List[str] = field(default_factory=list)  # import prefixes to build; honoured ON THE COMMAND LINE only
    recompute: Any = None  # [fvd] or all: these metrics' rows and features computed afresh, no cache served


@dataclass
class AggregationSchema:
    """How a metric's per-sample values become its aggregate (overrides the metric's declared choice)."""

    aggregator: Optional[str] = None  # mean | ratio | geomean | median
    statistics: Optional[List[str]] = None  # e.g. [mean, std, p5, p95]
    ci: Optional[str] = None  # auto | none | normal | wilson | bootstrap


@dataclass
class MetricBaseSchema:
    """Keys every metric option accepts; the core reads ``aggregation``, the metric never sees it."""

    aggregation: AggregationSchema = field(default_factory=AggregationSchema)
    # a failed generation: null/exclude = left out of the mean (coverage < 1) | worst = scored at the
    # metric's worst value (a penalised mean); docs/reliability.md
    on_failure: Optional[str] = None


#: keys of a metric option that the core reads and the metric class never sees
METRIC_CORE_KEYS = tuple(f.name for f in fields(MetricBaseSchema))


@dataclass
class ModelRulesSchema:
    """Keys every model option accepts; the pipeline reads them, the model never sees them."""

    # the range of a float output ([0, 1] or [0, 255]); null: outputs must be uint8 (docs/reliability.md)
    output_range: Optional[List[float]] = None


#: keys of a model option that the pipeline reads (wfeval/pipeline/contract.py), never the model
MODEL_CORE_KEYS = tuple(f.name for f in fields(ModelRulesSchema))


@dataclass
class ScorecardComponentSchema:
    weight: float = 1.0
    normalizer: str = "identity"  # minmax | zscore | identity
    low: Optional[float] = None  # minmax anchors
    high: Optional[float] = None
    mean: Optional[float] = None  # zscore reference
    std: Optional[float] = None
    higher_is_better: Optional[bool] = None  # default: the metric's own


@dataclass
class ScorecardSchema:
    primary: Optional[str] = None  # the metric leaderboards sort by
    components: Dict[str, ScorecardComponentSchema] = field(default_factory=dict)


@dataclass
class EvidenceSchema:
    min_coverage: float = 0.0
    min_valid: Dict[str, int] = field(default_factory=dict)  # metric id (or "default") -> count
    metric_versions: Dict[str, str] = field(default_factory=dict)
    dataset_hash: Optional[str] = None
    official_splits: List[str] = field(default_factory=list)


@dataclass
class BenchmarkRulesSchema:
    """Family-independent evaluation rules of a benchmark; the core reads them, the adapter never sees them."""

    group_by: List[str] = field(default_factory=list)  # split | task_id | metadata.<key>
    scorecard: ScorecardSchema = field(default_factory=ScorecardSchema)
    evidence: EvidenceSchema = field(default_factory=EvidenceSchema)


#: the base schema of each plugin group (wfeval.config.derive adds the class's own options)
BASE_SCHEMAS: Dict[str, type] = {"metric": MetricBaseSchema, "model": ModelRulesSchema,
                                 "benchmark": BenchmarkRulesSchema, "protocol": ProtocolBaseSchema}


@dataclass
class WfevalSchema:
    task: TaskSchema = MISSING
    benchmark: Any = MISSING
    model: Any = MISSING
    protocol: Any = MISSING
    policy: Any = None  # protocol=closed_loop: who picks the actions (conf/policy)
    metric: Dict[str, Any] = field(default_factory=dict)
    extra_metrics: List[str] = field(default_factory=list)
    run: RunSchema = field(default_factory=RunSchema)


def register_core_schemas() -> None:
    """Kept for callers of earlier versions: the primary config's schema (``wfeval_schema``) is served
    by wfeval's Hydra config source (:func:`wfeval.config.derive.served_configs`)."""
