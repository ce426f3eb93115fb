"""Public contracts of wfeval: metric/task/benchmark specs, generation records, the Metric protocol."""
from __future__ import annotations

from ._action import ACTION_KINDS, ActionSpace, action_space_of, has_continuous_actions
from ._base import ContractError
from ._generation import ArtifactRef, GenerationRequest, GenerationResult, draw_of, requested_samples
from ._metric import ITEM_STATUSES, AggregateResult, Metric, MetricResult, MetricSpec
from ._schema import (
    ACTION_SPACE_SCHEMA_VERSION,
    AGGREGATE_RESULT_SCHEMA_VERSION,
    ARTIFACT_REF_SCHEMA_VERSION,
    BENCHMARK_SPEC_SCHEMA_VERSION,
    EVALUATION_PROTOCOL_SCHEMA_VERSION,
    GENERATION_REQUEST_SCHEMA_VERSION,
    GENERATION_RESULT_SCHEMA_VERSION,
    METRIC_RESULT_SCHEMA_VERSION,
    METRIC_SPEC_SCHEMA_VERSION,
    WORLD_TASK_CONFIG_SCHEMA_VERSION,
)
from ._task import BenchmarkSpec, EvaluationProtocolSpec, WorldTaskConfig

__all__ = [
    "MetricSpec",
    "MetricResult",
    "AggregateResult",
    "Metric",
    "EvaluationProtocolSpec",
    "WorldTaskConfig",
    "BenchmarkSpec",
    "ArtifactRef",
    "GenerationRequest",
    "GenerationResult",
    "requested_samples",
    "draw_of",
    "ContractError",
    "ActionSpace",
    "ACTION_KINDS",
    "action_space_of",
    "has_continuous_actions",
    "ITEM_STATUSES",
    "METRIC_SPEC_SCHEMA_VERSION",
    "METRIC_RESULT_SCHEMA_VERSION",
    "AGGREGATE_RESULT_SCHEMA_VERSION",
    "EVALUATION_PROTOCOL_SCHEMA_VERSION",
    "WORLD_TASK_CONFIG_SCHEMA_VERSION",
    "BENCHMARK_SPEC_SCHEMA_VERSION",
    "ARTIFACT_REF_SCHEMA_VERSION",
    "GENERATION_REQUEST_SCHEMA_VERSION",
    "GENERATION_RESULT_SCHEMA_VERSION",
    "ACTION_SPACE_SCHEMA_VERSION",
]
