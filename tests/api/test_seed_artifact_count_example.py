"""The seed's ArtifactCountMetric example, run end to end against the api records."""
from __future__ import annotations

import pytest

from wfeval.api import AggregateResult, ArtifactRef, GenerationRequest, GenerationResult, Metric, MetricResult


class ArtifactCountMetric:
    name = "artifact_count_example"
    version = "1.0"
    required_artifacts = ()
    higher_is_better = None

    def compute_sample(self, request, result):
        value = len(result.artifacts)
        return MetricResult(
            sample_id=request.sample_id,
            metric_id=self.name,
            raw_value=value,
            normalized_value=value,
        )

    def aggregate(self, results):
        values = [item.raw_value for item in results if item.valid]
        mean = sum(values) / len(values) if values else None
        return AggregateResult(
            metric_id=self.name,
            n_total=len(results),
            n_valid=len(values),
            n_skipped=len(results) - len(values),
            raw_stats={"mean": mean},
            normalized_stats={"mean": mean},
            valid=bool(values),
        )


def _pair(sample_id: str, n_artifacts: int) -> tuple[GenerationRequest, GenerationResult]:
    artifacts = {f"frame_{i}": ArtifactRef("image", f"/out/{sample_id}/{i}.png") for i in range(n_artifacts)}
    return GenerationRequest(sample_id, task_id="t"), GenerationResult(sample_id, artifacts=artifacts)


def test_artifact_count_metric_satisfies_the_protocol():
    assert isinstance(ArtifactCountMetric(), Metric)


def test_compute_sample_counts_artifacts_and_aggregate_averages():
    metric = ArtifactCountMetric()
    results = [metric.compute_sample(*_pair(f"s{n}", n)) for n in (0, 1, 2)]
    assert [r.sample_id for r in results] == ["s0", "s1", "s2"]
    assert [r.raw_value for r in results] == [0, 1, 2]
    assert [r.normalized_value for r in results] == [0.0, 1.0, 2.0]
    assert all(type(r.normalized_value) is float and r.status == "ok" for r in results)

    agg = metric.aggregate(results)
    assert agg.metric_id == "artifact_count_example"
    assert (agg.n_total, agg.n_valid, agg.n_skipped, agg.valid) == (3, 3, 0, True)
    assert agg.raw_stats["mean"] == pytest.approx(1.0)
    assert agg.normalized_stats["mean"] == pytest.approx(1.0)
    assert AggregateResult.from_dict(agg.to_dict()) == agg


def test_aggregate_of_no_results_is_invalid_with_none_mean():
    agg = ArtifactCountMetric().aggregate([])
    assert (agg.n_total, agg.valid, agg.raw_stats["mean"]) == (0, False, None)
