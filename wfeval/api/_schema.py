"""Schema version strings written into every serialized contract record.

The part after the slash is the major version; bump it on incompatible changes.
"""
from __future__ import annotations

METRIC_SPEC_SCHEMA_VERSION = "wfeval.metric_spec/1"
METRIC_RESULT_SCHEMA_VERSION = "wfeval.metric_result/1"
AGGREGATE_RESULT_SCHEMA_VERSION = "wfeval.aggregate_result/1"
EVALUATION_PROTOCOL_SCHEMA_VERSION = "wfeval.evaluation_protocol/1"
WORLD_TASK_CONFIG_SCHEMA_VERSION = "wfeval.world_task_config/1"
BENCHMARK_SPEC_SCHEMA_VERSION = "wfeval.benchmark_spec/1"
ARTIFACT_REF_SCHEMA_VERSION = "wfeval.artifact_ref/1"
GENERATION_REQUEST_SCHEMA_VERSION = "wfeval.generation_request/1"
GENERATION_RESULT_SCHEMA_VERSION = "wfeval.generation_result/1"
ACTION_SPACE_SCHEMA_VERSION = "wfeval.action_space/1"
