"""Schemas that make a typo or a wrong type fail at compose time, naming the full key.

The primary config extends ``wfeval_schema``; each built-in group option extends its own schema
through ``defaults: [/schema/<group>/<name>@_here_, _self_]``, derived from the option's class
(:mod:`wfeval.config.derive`) on top of its group's base schema here (:data:`BASE_SCHEMAS`). User
options without a schema are accepted as they are and checked when they are instantiated. This
module imports no plugin.
"""

from __future__ import annotations

from dataclasses import dataclass, field, fields
from typing import Any, Dict, List, Optional, Union

from omegaconf import MISSING


def _structured(cls: type, name: str, *, skip: tuple[str, ...] = (), required: tuple[str, ...] = ()) -> type:
    """A structured-config twin of a dataclass of options (one definition: the dataclass): the same
    fields and defaults in the types OmegaConf checks (``X | None`` → ``Optional[X]``,
    ``tuple[str, ...]`` → ``List[str]``, ``Mapping | None`` → ``Dict[str, Any]`` defaulting to ``{}``);
    ``skip``: fields left out; ``required``: fields without a default (``MISSING``)."""
    import dataclasses
    import types
    import typing
    from collections.abc import Mapping

    specs: list[tuple[str, Any, Any]] = []
    hints = typing.get_type_hints(cls)
    for f in (f for f in fields(cls) if f.name not in skip):
        hint = hints[f.name]
        if isinstance(hint, types.UnionType) or typing.get_origin(hint) is Union:
            hint = next(a for a in typing.get_args(hint) if a is not type(None))
            optional = True
        else:
            optional = False
        origin = typing.get_origin(hint)
        if origin is tuple:
            specs.append((f.name, List[typing.get_args(hint)[0]], field(default_factory=lambda d=f.default: list(d))))
        elif origin is not None and issubclass(origin, Mapping):
            specs.append((f.name, Dict[str, Any], field(default_factory=dict)))
        elif f.name in required:
            specs.append((f.name, hint, field(default=MISSING)))
        else:
            specs.append((f.name, Optional[hint] if optional else hint, field(default=f.default)))
    return dataclasses.make_dataclass(name, specs)


def _task_schema() -> type:
    from wfeval.api import WorldTaskConfig

    return _structured(WorldTaskConfig, "TaskSchema", skip=("schema_version",), required=("name",))


#: the ``task`` section's schema, derived from :class:`wfeval.api.WorldTaskConfig`
TaskSchema = _task_schema()


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


def _run_schema() -> type:
    from wfeval.config.run_config import RunSettings

    return _structured(RunSettings, "RunSchema")


#: the ``run`` section's schema, derived from :class:`wfeval.config.run_config.RunSettings`
RunSchema = _run_schema()


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


#: the fewest valid samples per measurement a result rests on to be eligible, for every benchmark and
#: dataset reader alike (the one place it is declared); a benchmark lowers or raises it with
#: ``evidence.min_valid.default`` (``memory_maze_long``: 8) or per measurement (``min_valid.fvd``)
MIN_VALID = 32


@dataclass
class EvidenceSchema:
    min_coverage: float = 0.0
    # metric id (or "default") -> count
    min_valid: Dict[str, int] = field(default_factory=lambda: {"default": MIN_VALID})
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
