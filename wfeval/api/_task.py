"""Task contracts: evaluation protocols, world-task configs and benchmark specs."""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import InitVar, dataclass, field
from typing import Any

from ._action import ActionSpace
from ._base import Record, aliased, fail
from ._metric import MetricSpec
from ._schema import (
    BENCHMARK_SPEC_SCHEMA_VERSION,
    EVALUATION_PROTOCOL_SCHEMA_VERSION,
    WORLD_TASK_CONFIG_SCHEMA_VERSION,
)


@dataclass(frozen=True)
class EvaluationProtocolSpec(Record):
    """Evaluation protocol entry for a task or benchmark catalog task.

    Simple string protocols stay supported; catalogs may use this structured form to attach
    metric ids, groups and protocol-specific metadata.
    """

    name: str
    metric_ids: tuple[str, ...] = ()
    metric_groups: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    schema_version: str = EVALUATION_PROTOCOL_SCHEMA_VERSION

    _required = ("name", "schema_version")

    @classmethod
    def from_mapping(cls, data: Mapping[str, Any]) -> EvaluationProtocolSpec:
        """Lenient catalog reader: unknown keys are kept in ``metadata`` (explicit metadata wins)."""
        where = "EvaluationProtocolSpec.from_mapping"
        if not isinstance(data, Mapping):
            raise fail(where, "mapping", data)
        known = {f.name for f in dataclasses.fields(cls)}
        kwargs = {k: v for k, v in data.items() if k in known}
        extras = {k: v for k, v in data.items() if k not in known}
        explicit = kwargs.get("metadata")
        if explicit is not None and not isinstance(explicit, Mapping):
            raise fail("EvaluationProtocolSpec.metadata", "mapping", explicit)
        kwargs["metadata"] = {**extras, **(explicit or {})}
        cls.check_keys(kwargs, where)
        return cls(**kwargs)

    @classmethod
    def coerce_many(cls, value: Any) -> tuple[EvaluationProtocolSpec, ...]:
        """Normalize None / str / mapping / spec, or a list/tuple of those, to a tuple of specs."""
        if value is None:
            return ()
        is_seq = isinstance(value, (list, tuple))
        out = []
        for i, item in enumerate(value if is_seq else [value]):
            if isinstance(item, cls):
                out.append(item)
            elif isinstance(item, str):
                out.append(cls(item))
            elif isinstance(item, Mapping):
                out.append(cls.from_mapping(item))
            else:
                where = f"EvaluationProtocolSpec.coerce_many{f'[{i}]' if is_seq else ''}"
                expected = "str, mapping or EvaluationProtocolSpec"
                raise fail(where, expected if is_seq else f"{expected} (or a list/tuple of them)", item)
        return tuple(out)


@aliased("name", "task_id")
@dataclass(frozen=True)
class WorldTaskConfig(Record):
    """Task binding a protocol to input/output keys, generation defaults and expected metrics."""

    name: str | None = None
    task_id: InitVar[str | None] = None
    protocol: str = "open_loop"
    evaluation_protocol: str = "reference_metrics"
    capability_track: str = "core_video"
    schema_type: str = "sample"
    input_keys: tuple[str, ...] = ()
    output_keys: tuple[str, ...] = ("generated_video",)
    metric_ids: tuple[str, ...] = ()
    metric_groups: tuple[str, ...] = ()
    tags: tuple[str, ...] = ()
    description: str = ""
    data: Mapping[str, Any] | None = None
    generation_defaults: Mapping[str, Any] | None = None
    metadata: Mapping[str, Any] | None = None
    schema_version: str = WORLD_TASK_CONFIG_SCHEMA_VERSION

    _required = ("protocol", "schema_version")


@aliased("name", "benchmark_id")
@dataclass(frozen=True)
class BenchmarkSpec(Record):
    """Execution-facing benchmark description: tasks, metrics, splits and dataset metadata."""

    name: str | None = None
    benchmark_id: InitVar[str | None] = None
    version: str = "1.0"
    tasks: tuple[WorldTaskConfig, ...] = ()
    metrics: tuple[MetricSpec, ...] = ()
    splits: tuple[str, ...] = ("default",)
    tags: tuple[str, ...] = ()
    description: str = ""
    dataset_root: str | None = None
    metadata: Mapping[str, Any] | None = None
    action_space: ActionSpace | None = None  # added to the seed contract: what one action is (None: not declared)
    schema_version: str = BENCHMARK_SPEC_SCHEMA_VERSION

    _required = ("schema_version",)

