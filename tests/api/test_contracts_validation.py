"""Validation errors of the api records: types, aliases, unknown keys and protocol coercion."""
from __future__ import annotations

import pytest

from wfeval.api import (
    ITEM_STATUSES,
    AggregateResult,
    ArtifactRef,
    BenchmarkSpec,
    ContractError,
    EvaluationProtocolSpec,
    GenerationRequest,
    GenerationResult,
    Metric,
    MetricResult,
    MetricSpec,
    WorldTaskConfig,
)


def test_contract_error_is_both_value_error_and_type_error():
    assert issubclass(ContractError, ValueError) and issubclass(ContractError, TypeError)


def test_wrong_type_message_names_class_field_and_value():
    with pytest.raises(ContractError) as info:
        MetricSpec("fvd", weight="heavy")
    assert str(info.value) == "MetricSpec.weight: expected float, got str ('heavy')"


@pytest.mark.parametrize(
    ("build", "message"),
    [
        (lambda: MetricSpec("m", primary=1), "MetricSpec.primary: expected bool, got int (1)"),
        (lambda: MetricSpec("m", weight=True), "MetricSpec.weight: expected float, got bool (True)"),
        (lambda: MetricSpec("m", tags="abc"), "MetricSpec.tags: expected sequence of str, got str ('abc')"),
        (lambda: MetricSpec("m", tags=["a", 3]), "MetricSpec.tags[1]: expected str, got int (3)"),
        (lambda: MetricSpec("m", metadata=[1]), "MetricSpec.metadata: expected mapping, got list ([1])"),
        (lambda: MetricSpec("m", higher_is_better="yes"), "MetricSpec.higher_is_better: expected bool, got str ('yes')"),
        (lambda: AggregateResult("m", n_total=True), "AggregateResult.n_total: expected int, got bool (True)"),
        (lambda: AggregateResult("m", n_total=1.5), "AggregateResult.n_total: expected int, got float (1.5)"),
        (lambda: AggregateResult("m", skip_breakdown={"x": "1"}),
         "AggregateResult.skip_breakdown['x']: expected int, got str ('1')"),
        (lambda: WorldTaskConfig("t", protocol=None), "WorldTaskConfig.protocol: expected str, got NoneType (None)"),
        (lambda: ArtifactRef("video", "/v.mp4", shape=[2, "3"]), "ArtifactRef.shape[1]: expected int, got str ('3')"),
        (lambda: GenerationResult("s", artifacts={"v": 3}),
         "GenerationResult.artifacts['v']: expected ArtifactRef or mapping, got int (3)"),
    ],
)
def test_type_errors_name_class_and_field(build, message):
    with pytest.raises(ContractError) as info:
        build()
    assert str(info.value) == message


@pytest.mark.parametrize(
    ("cls", "canonical", "alias"),
    [(MetricSpec, "id", "metric_id"), (WorldTaskConfig, "name", "task_id"), (BenchmarkSpec, "name", "benchmark_id")],
)
def test_alias_agreement_disagreement_and_missing(cls, canonical, alias):
    by_canonical, by_alias = cls(**{canonical: "x"}), cls(**{alias: "x"})
    both = cls(**{canonical: "x", alias: "x"})
    assert by_canonical == by_alias == both
    assert getattr(by_alias, canonical) == getattr(by_alias, alias) == "x"
    assert cls.from_dict({alias: "x"}) == by_canonical
    assert canonical in by_alias.to_dict() and alias not in by_alias.to_dict()
    with pytest.raises(ContractError, match=f"{canonical} .*'x'.* and {alias} .*'y'.* disagree"):
        cls(**{canonical: "x", alias: "y"})
    with pytest.raises(ContractError) as info:
        cls()
    assert str(info.value) == f"{cls.__name__}: one of {canonical} / {alias} is required"
    for key in (canonical, alias):
        with pytest.raises(ContractError, match=f"{cls.__name__}.{key}: expected non-empty str"):
            cls(**{key: ""})


def test_alias_property_is_read_only():
    with pytest.raises(AttributeError):
        MetricSpec("m").metric_id = "other"  # type: ignore[misc]


def test_unknown_key_error_suggests_close_match():
    with pytest.raises(ContractError) as info:
        MetricSpec.from_dict({"metricid": "fvd"})
    assert str(info.value) == "MetricSpec.from_dict: unknown key 'metricid'. Did you mean: metric_id?"


def test_unknown_key_without_close_match_lists_valid_keys():
    with pytest.raises(ContractError) as info:
        EvaluationProtocolSpec.from_dict({"name": "p", "zzz": 1})
    assert str(info.value) == (
        "EvaluationProtocolSpec.from_dict: unknown key 'zzz'. "
        "Valid keys: name, metric_ids, metric_groups, metadata, schema_version"
    )


def test_from_dict_rejects_non_mapping_and_missing_required_keys():
    with pytest.raises(ContractError, match=r"^GenerationResult.from_dict: expected mapping, got list"):
        GenerationResult.from_dict(["s1"])  # type: ignore[arg-type]
    with pytest.raises(ContractError) as info:
        MetricResult.from_dict({"sample_id": "s1"})
    assert str(info.value) == "MetricResult.from_dict: missing required key 'metric_id'"


def test_nested_record_errors_carry_the_outer_path():
    with pytest.raises(ContractError) as info:
        BenchmarkSpec.from_dict({"name": "b", "tasks": [{"name": "t", "protocl": "x"}]})
    assert str(info.value).startswith("BenchmarkSpec.tasks[0]: WorldTaskConfig.from_dict: unknown key 'protocl'")
    with pytest.raises(ContractError, match=r"^BenchmarkSpec.metrics\[0\]: expected MetricSpec or mapping, got str"):
        BenchmarkSpec("b", metrics=["fvd"])


@pytest.mark.parametrize(
    ("build", "fragment"),
    [
        (lambda: MetricResult("", "m"), "MetricResult.sample_id: must be a non-empty string"),
        (lambda: MetricResult("s", "m", coverage=1.5), "MetricResult.coverage: expected a float in [0, 1]"),
        (lambda: MetricResult("s", "m", coverage=-0.1), "MetricResult.coverage"),
        (lambda: AggregateResult("m", n_skipped=-1), "AggregateResult.n_skipped: expected a non-negative int"),
        (lambda: ArtifactRef("video", "/v.mp4", sha256="ABC"), "ArtifactRef.sha256"),
        (lambda: ArtifactRef("video", "/v.mp4", sha256="A" * 64), "ArtifactRef.sha256"),
        (lambda: ArtifactRef("video", "/v.mp4", shape=(2, -1)), "ArtifactRef.shape[1]"),
        (lambda: ArtifactRef("video", ""), "ArtifactRef.uri: must be a non-empty string"),
        (lambda: GenerationRequest(""), "GenerationRequest.sample_id: must be a non-empty string"),
        (lambda: GenerationResult("s", status="done"), "GenerationResult.status: expected one of"),
        (lambda: GenerationResult("s", latency_seconds=-1), "GenerationResult.latency_seconds"),
        (lambda: EvaluationProtocolSpec(""), "EvaluationProtocolSpec.name: must be a non-empty string"),
    ],
)
def test_value_checks(build, fragment):
    with pytest.raises(ContractError) as info:
        build()
    assert fragment in str(info.value)


def test_valid_sha256_and_statuses_are_accepted():
    assert ArtifactRef("video", "/v.mp4", sha256="0f" * 32).sha256 == "0f" * 32
    assert [GenerationResult("s", status=s).status for s in ("ok", "failed", "not_generated")] == [
        "ok", "failed", "not_generated"]
    assert ITEM_STATUSES == ("ok", "fail", "skip", "error")


def test_coerce_many_on_string_mapping_spec_mixed_list_and_none():
    spec = EvaluationProtocolSpec("closed_loop", metric_ids=("success",))
    assert EvaluationProtocolSpec.coerce_many("open_loop") == (EvaluationProtocolSpec("open_loop"),)
    assert EvaluationProtocolSpec.coerce_many({"name": "p", "metric_ids": ["fvd"]}) == (
        EvaluationProtocolSpec("p", metric_ids=("fvd",)),)
    assert EvaluationProtocolSpec.coerce_many(spec) == (spec,)
    mixed = EvaluationProtocolSpec.coerce_many(["open_loop", {"name": "p"}, spec])
    assert [p.name for p in mixed] == ["open_loop", "p", "closed_loop"]
    assert EvaluationProtocolSpec.coerce_many(None) == ()
    assert EvaluationProtocolSpec.coerce_many([]) == ()


@pytest.mark.parametrize("bad", [3, ["open_loop", 3], [["nested"]], {"metric_ids": ["fvd"]}, ""])
def test_coerce_many_rejects_bad_input(bad):
    with pytest.raises(ContractError, match="EvaluationProtocolSpec"):
        EvaluationProtocolSpec.coerce_many(bad)


def test_from_mapping_keeps_extra_catalog_keys_in_metadata():
    spec = EvaluationProtocolSpec.from_mapping(
        {"name": "open_loop", "metric_groups": ["video"], "horizon": 16, "judge": {"model": "x"},
         "metadata": {"owner": "team", "horizon": 32}})
    assert spec.metric_groups == ("video",)
    assert dict(spec.metadata) == {"horizon": 32, "judge": spec.metadata["judge"], "owner": "team"}
    assert dict(spec.metadata["judge"]) == {"model": "x"}
    with pytest.raises(ContractError, match="EvaluationProtocolSpec.from_dict: unknown key 'horizon'"):
        EvaluationProtocolSpec.from_dict({"name": "open_loop", "horizon": 16})
    with pytest.raises(ContractError, match="EvaluationProtocolSpec.from_mapping: expected mapping"):
        EvaluationProtocolSpec.from_mapping("open_loop")  # type: ignore[arg-type]


class _Conforming:
    name = "m"
    version = "1.0"
    required_artifacts = ("generated_video",)
    higher_is_better = True

    def compute_sample(self, request, result):
        return MetricResult(request.sample_id, self.name)

    def aggregate(self, results):
        return AggregateResult(self.name, n_total=len(results))


class _MissingComputeSample:
    name = "m"
    version = "1.0"
    required_artifacts = ()
    higher_is_better = None

    def aggregate(self, results):
        return AggregateResult(self.name)


def test_metric_protocol_is_structural():
    assert isinstance(_Conforming(), Metric)
    assert not isinstance(_MissingComputeSample(), Metric)
