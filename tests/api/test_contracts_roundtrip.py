"""Round trips (dict, JSON, pickle), coercion to tuples and deep freezing of the api records."""
from __future__ import annotations

import copy
import dataclasses
import json
import pickle

import pytest

from wfeval.api import (
    ARTIFACT_REF_SCHEMA_VERSION,
    METRIC_SPEC_SCHEMA_VERSION,
    AggregateResult,
    ArtifactRef,
    BenchmarkSpec,
    EvaluationProtocolSpec,
    GenerationRequest,
    GenerationResult,
    MetricResult,
    MetricSpec,
    WorldTaskConfig,
)

SHA = "ab" * 32
VIDEO = ArtifactRef("video", "file:///tmp/out.mp4", sha256=SHA, media_type="video/mp4",
                    shape=[16, 64, 64, 3], dtype="uint8", metadata={"fps": 12})
TASK = WorldTaskConfig(name="action-conditioned-video", protocol="open_loop",
                       input_keys=["image", "actions"], metric_ids=("artifact_count_example",),
                       generation_defaults={"fps": 12, "seed": 42}, data={"splits": ["val"]})
SPEC = MetricSpec("fvd", aliases=["frechet_video_distance"], higher_is_better=False, weight=2,
                  statistics=["mean", "std"], metadata={"backbone": {"name": "i3d", "layers": [1, 2]}})

RECORDS = [
    VIDEO,
    SPEC,
    MetricResult("s1", "fvd", raw_value=[1, 2], normalized_value=0.5, components={"a": 1.5},
                 coverage=0.75, diagnostics={"status": "ok"}, artifact_refs={"video": VIDEO},
                 judge_trace={"steps": [{"q": "x"}]}),
    AggregateResult("fvd", n_total=3, n_valid=2, n_skipped=1, raw_stats={"mean": 1.0},
                    confidence_interval={"low": 0.5, "high": 1.5}, stderr=0.1,
                    skip_breakdown={"missing_video": 1}),
    EvaluationProtocolSpec("open_loop", metric_ids=["fvd"], metadata={"horizon": 16}),
    TASK,
    BenchmarkSpec(name="nav", tasks=(TASK,), metrics=(SPEC,), splits=["validation"],
                  dataset_root="/data", metadata={"source": "unit-test"}),
    GenerationRequest("s1", task_id="t", benchmark_id="nav", inputs={"image": VIDEO},
                      controls={"actions": [[0.1, 0.2], [0.3, 0.4]]}, references={"video": VIDEO},
                      generation={"seed": 1}, prompt="go left"),
    GenerationResult("s1", artifacts={"generated_video": VIDEO}, latency_seconds=1, steps=16,
                     stop_reason="horizon", cost=0.01, model_id="m"),
]


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_from_dict_of_to_dict_is_equal(record):
    assert type(record).from_dict(record.to_dict()) == record


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_round_trip_through_json_text_is_equal(record):
    data = json.loads(json.dumps(record.to_dict()))
    assert type(record).from_dict(data) == record


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_pickle_and_deepcopy_preserve_equality(record):
    assert pickle.loads(pickle.dumps(record)) == record
    assert copy.deepcopy(record) == record


@pytest.mark.parametrize("record", RECORDS, ids=lambda r: type(r).__name__)
def test_to_dict_keys_follow_field_order_and_end_with_schema_version(record):
    keys = list(record.to_dict())
    assert keys == [f.name for f in dataclasses.fields(record)]
    assert keys[-1] == "schema_version"


def test_to_dict_converts_nested_records_and_sequences_to_plain_json_types():
    data = RECORDS[-1].to_dict()
    assert data["artifacts"]["generated_video"] == {
        "kind": "video", "uri": "file:///tmp/out.mp4", "sha256": SHA, "media_type": "video/mp4",
        "shape": [16, 64, 64, 3], "dtype": "uint8", "metadata": {"fps": 12},
        "schema_version": ARTIFACT_REF_SCHEMA_VERSION,
    }
    bench = RECORDS[6].to_dict()
    assert bench["tasks"][0]["name"] == "action-conditioned-video"
    assert bench["metrics"][0]["id"] == "fvd"
    assert bench["metrics"][0]["metadata"] == {"backbone": {"name": "i3d", "layers": [1, 2]}}
    assert "metric_id" not in bench["metrics"][0]
    assert type(bench["metrics"][0]["metadata"]) is dict


def test_sequence_fields_are_stored_as_tuples():
    assert SPEC.aliases == ("frechet_video_distance",)
    assert SPEC.statistics == ("mean", "std")
    assert TASK.input_keys == ("image", "actions")
    assert VIDEO.shape == (16, 64, 64, 3)
    assert RECORDS[6].splits == ("validation",)


def test_int_given_for_float_field_is_stored_as_float():
    assert SPEC.weight == 2.0 and type(SPEC.weight) is float
    assert type(RECORDS[-1].latency_seconds) is float


def test_mapping_fields_are_deep_frozen_read_only():
    with pytest.raises(TypeError):
        SPEC.metadata["new"] = 1  # type: ignore[index]
    with pytest.raises(TypeError):
        SPEC.metadata["backbone"]["name"] = "other"  # type: ignore[index]
    assert SPEC.metadata["backbone"]["layers"] == (1, 2)
    assert RECORDS[7].controls["actions"] == ((0.1, 0.2), (0.3, 0.4))


def test_caller_dict_mutation_does_not_leak_into_record():
    source = {"fps": 12}
    task = WorldTaskConfig("t", generation_defaults=source)
    source["fps"] = 99
    assert task.generation_defaults["fps"] == 12


def test_fields_are_frozen():
    with pytest.raises(dataclasses.FrozenInstanceError):
        SPEC.weight = 3.0  # type: ignore[misc]
    with pytest.raises(dataclasses.FrozenInstanceError):
        TASK.name = "other"  # type: ignore[misc]


def test_none_and_missing_mappings_become_empty_read_only_mappings():
    task = WorldTaskConfig("t", data=None, generation_defaults=None, metadata=None)
    assert dict(task.data) == {} and dict(task.generation_defaults) == {} and dict(task.metadata) == {}
    assert dict(MetricSpec("m").metadata) == {}
    assert dict(BenchmarkSpec("b").metadata) == {}
    assert MetricSpec("m").to_dict()["metadata"] == {}


def test_seed_defaults_and_positional_construction():
    spec = MetricSpec("fvd")
    assert (spec.id, spec.version, spec.aggregator, spec.statistics, spec.weight) == ("fvd", "1.0", "mean", ("mean",), 1.0)
    assert spec.schema_version == METRIC_SPEC_SCHEMA_VERSION == "wfeval.metric_spec/1"
    task = WorldTaskConfig("t")
    assert (task.protocol, task.evaluation_protocol, task.capability_track, task.schema_type, task.output_keys) == (
        "open_loop", "reference_metrics", "core_video", "sample", ("generated_video",))
    assert BenchmarkSpec("b").splits == ("default",)
    result = MetricResult("s1", "m")
    assert (result.raw_value, result.valid, result.coverage, result.status) == (None, True, 1.0, "ok")
    agg = AggregateResult("m")
    assert (agg.n_total, agg.n_valid, agg.n_skipped, agg.valid) == (0, 0, 0, True)
    assert EvaluationProtocolSpec("open_loop").metric_ids == ()


def test_benchmark_spec_built_from_nested_mappings():
    bench = BenchmarkSpec.from_dict({
        "benchmark_id": "nav",
        "tasks": [{"task_id": "t1", "input_keys": ["image"]}, TASK],
        "metrics": [{"metric_id": "fvd", "weight": 3}],
    })
    assert bench.name == bench.benchmark_id == "nav"
    assert bench.tasks == (WorldTaskConfig("t1", input_keys=("image",)), TASK)
    assert bench.metrics == (MetricSpec("fvd", weight=3.0),)
    assert isinstance(bench.metrics[0], MetricSpec)


def test_generation_request_converts_artifact_mappings():
    request = GenerationRequest("s1", inputs={"image": {"kind": "image", "uri": "/data/0.png"}})
    assert request.inputs["image"] == ArtifactRef("image", "/data/0.png")
    assert request.split == "default" and request.protocol == "open_loop" and request.prompt is None


def test_metric_result_status_reads_diagnostics_then_validity():
    assert MetricResult("s", "m", diagnostics={"status": "error"}).status == "error"
    assert MetricResult("s", "m", valid=False).status == "skip"
    assert MetricResult("s", "m", valid=False, diagnostics={"status": "weird"}).status == "skip"
    assert MetricResult("s", "m", diagnostics={"status": "fail"}).status == "fail"
