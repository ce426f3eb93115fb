"""The metric classes of the controllability, memory and policy-evaluation measures: values equal their
functional twins, aggregates carry what belongs beside the value (IDM ceiling and chance, the curve
over the gap, the bootstrap interval of the ranking), and a missing input is a skip with the reason."""

from __future__ import annotations

import math

import numpy as np
import pytest

from wfeval.api import GenerationRequest, GenerationResult
from wfeval.functional import action_sensitivity
from wfeval.metrics.controllability import ActionSensitivity, IDMAccuracy
from wfeval.metrics.memory import ReversibilityError, RevisitError
from wfeval.metrics.policy_evaluation import PolicyRankCorrelation, ReturnError
from wfeval.storage.artifacts import ArtifactStore


def video(value: int, t: int = 5) -> np.ndarray:
    return np.full((t, 16, 16, 3), value, np.uint8)


@pytest.fixture()
def store(tmp_path):
    return ArtifactStore(tmp_path)


def pair(store, sample="s0", actions=(1, 2, 3, 4), reference=None, outputs=None, metadata=None, controls=None):
    request = GenerationRequest(
        sample_id=sample, controls={"actions": list(actions), "action_names": ["a", "b", "c", "d", "e"],
                                    **(controls or {})},
        references={k: store.put_array(v, kind="video") for k, v in (reference or {}).items()},
        metadata=metadata or {})
    result = GenerationResult(sample_id=sample, artifacts={k: store.put_array(v, kind="video")
                                                           for k, v in (outputs or {}).items()})
    return request, result


def test_action_sensitivity_row_is_the_functional_twin(store):
    outputs = {"generated_video": video(105), "counterfactual_video_0": video(120), "counterfactual_video_1": video(140)}
    request, result = pair(store, reference={"video": video(100)}, outputs=outputs)
    row = ActionSensitivity(skip_frames=1).compute_sample(request, result)
    expected = action_sensitivity(video(105), [video(120), video(140)], video(100), skip=1)["value"]
    assert row.status == "ok" and row.raw_value == pytest.approx(expected)
    assert row.components["counterfactuals"] == 2 and len(row.components["per_frame"]) == 4


def test_action_sensitivity_without_counterfactuals_skips_saying_which_task(store):
    request, result = pair(store, reference={"video": video(100)}, outputs={"generated_video": video(100)})
    row = ActionSensitivity().compute_sample(request, result)
    assert row.status == "skip" and "task=controllability" in row.skip_reason


class FakeIDM:
    """Reads the action off the frame's mean value: action = (value // 10) % 5 of frame t+1."""

    variance = None

    def predict(self, frames):
        return (frames[1:].reshape(len(frames) - 1, -1)[:, 0].astype(int) // 10) % 5

    def describe(self):
        return {"name": "fake", "weights_sha256": "0" * 64, "pinned": True, "heldout": {"value": 0.9}}


class FakeProvider:
    def __init__(self, why=None):
        self.why = why

    def for_request(self, request):
        return (None, self.why) if self.why else (FakeIDM(), None)

    def identity(self):
        return {"fake": 1}


def frames_for(actions):
    return np.stack([np.full((16, 16, 3), 0, np.uint8)] + [np.full((16, 16, 3), 10 * a, np.uint8) for a in actions])


def test_idm_accuracy_reports_ceiling_and_chance_beside_the_value(store):
    metric = IDMAccuracy(idm=FakeProvider())
    rows = []
    for i, (truth, generated) in enumerate([((1, 1, 2, 3), (1, 1, 2, 0)), ((1, 4, 4, 4), (0, 0, 0, 0))]):
        request, result = pair(store, f"s{i}", truth, reference={"video": frames_for(truth)},
                               outputs={"generated_video": frames_for(generated)})
        rows.append(metric.compute_sample(request, result))
    assert [r.raw_value for r in rows] == [0.75, 0.0]
    assert [r.components["reference_value"] for r in rows] == [1.0, 1.0]
    agg = metric.aggregate(rows)
    assert agg.diagnostics["value"] == pytest.approx(0.375)
    assert agg.diagnostics["ceiling"] == 1.0 and agg.diagnostics["ceiling_n"] == 2
    # true actions 1:3, 2:1, 3:1, 4:3 of 8; read 0:5, 1:2, 2:1: chance = Σ f_true·f_read = 3/8·2/8 + 1/8·1/8
    assert agg.diagnostics["chance"] == pytest.approx(7 / 64)
    assert agg.diagnostics["majority"] == pytest.approx(3 / 8) and agg.diagnostics["uniform"] == pytest.approx(1 / 5)
    assert agg.diagnostics["idm"]["name"] == "fake"


def test_idm_accuracy_skips_a_sample_no_idm_may_read(store):
    request, result = pair(store, outputs={"generated_video": frames_for((1, 2, 3, 4))})
    row = IDMAccuracy(idm=FakeProvider("the IDM was trained on this sample")).compute_sample(request, result)
    assert row.status == "skip" and "trained on this sample" in row.skip_reason


def memory_pair(store, frames, revisits, loops=(), masks=None):
    masks = np.ones(frames.shape[:3], np.uint8) if masks is None else masks
    request = GenerationRequest(sample_id="m0", metadata={"memory": {"revisits": [list(p) for p in revisits],
                                                                     "loops": [list(p) for p in loops]}},
                                references={"static_mask": store.put_array(masks, kind="array")})
    result = GenerationResult(sample_id="m0", artifacts={"generated_video": store.put_array(frames, kind="video")})
    return request, result


def test_revisit_error_is_the_mean_over_gap_buckets_with_its_curve(store):
    frames = np.stack([video(v, t=1)[0] for v in (10, 20, 10, 40, 10, 70)])
    request, result = memory_pair(store, frames, revisits=[(0, 2), (0, 4), (1, 3), (1, 5)], loops=[(0, 4)])
    row = RevisitError(pool=8).compute_sample(request, result)
    # gaps 2, 4, 2, 4 with errors 0, 0, 20, 50: bucket 2 → 10, bucket 4 → 25
    assert row.raw_value == pytest.approx(17.5) and row.components["buckets"] == {"2": 10.0, "4": 25.0}
    agg = RevisitError(pool=8).aggregate([row, row])
    assert agg.diagnostics["curve"]["4"]["mean"] == 25.0 and agg.diagnostics["curve"]["4"]["n"] == 2
    loop = ReversibilityError(pool=8).compute_sample(request, result)
    assert loop.raw_value == 0.0 and loop.components["buckets"] == {"4": 0.0}


def test_memory_metrics_skip_samples_without_a_plan(store):
    request, result = pair(store, outputs={"generated_video": video(1)})
    assert RevisitError().compute_sample(request, result).skip_reason.endswith("run task=memory")


def policy_pair(sample, model, true, names=("a", "b", "c")):
    request = GenerationRequest(sample_id=sample, metadata={"policy_evaluation": {"true": {
        n: {"return": r} for n, r in zip(names, true)}}})
    result = GenerationResult(sample_id=sample, metadata={"policy_evaluation": {
        "policies": list(names), "model": {n: {"return": r} for n, r in zip(names, model)}}})
    return request, result


def test_policy_rank_correlation_is_the_spearman_of_mean_returns_with_a_bootstrap_interval():
    metric = PolicyRankCorrelation(bootstrap=200)
    rows = [metric.compute_sample(*policy_pair(f"s{i}", m, t)) for i, (m, t) in enumerate([
        ((0.9, 0.2, 0.0), (1.0, 0.5, 0.0)), ((0.7, 0.4, 0.1), (0.8, 0.3, 0.0))])]
    assert all(r.status == "ok" and r.raw_value is None for r in rows)
    agg = metric.aggregate(rows)
    assert agg.valid and agg.diagnostics["value"] == 1.0 and agg.confidence_interval["low"] == 1.0
    tie = metric.aggregate([metric.compute_sample(*policy_pair("s", (0, 0, 0), (1.0, 0.5, 0.0)))])
    assert tie.diagnostics["value"] == 0.0 and tie.diagnostics["model_returns_tie"]
    error = ReturnError().compute_sample(*policy_pair("s", (0.5, 0.5, 0.5), (1.0, 0.5, 0.0)))
    assert error.raw_value == pytest.approx(1 / 3)


def test_policy_rank_correlation_without_a_bootstrap_is_a_valid_aggregate_with_no_interval():
    metric = PolicyRankCorrelation(bootstrap=0)
    rows = [metric.compute_sample(*policy_pair(f"s{i}", m, t)) for i, (m, t) in enumerate([
        ((0.9, 0.2, 0.0), (1.0, 0.5, 0.0)), ((0.1, 0.4, 0.7), (0.8, 0.3, 0.0))])]
    agg = metric.aggregate(rows)  # the result contract holds: an empty interval, never None
    assert agg.valid and agg.confidence_interval == {} and agg.n_valid == 2
    assert agg.raw_stats["spearman"] == agg.diagnostics["value"] == pytest.approx(0.5)


def test_policy_rank_correlation_refuses_to_mix_policy_sets():
    metric = PolicyRankCorrelation(bootstrap=0)
    rows = [metric.compute_sample(*policy_pair("s0", (1, 0), (1, 0), names=("a", "b"))),
            metric.compute_sample(*policy_pair("s1", (1, 0), (1, 0), names=("a", "c")))]
    agg = metric.aggregate(rows)
    assert not agg.valid and "different policy sets" in agg.diagnostics["reason"]
    missing = metric.compute_sample(GenerationRequest(sample_id="x"), GenerationResult(sample_id="x"))
    assert missing.status == "skip" and "task=policy_evaluation" in missing.skip_reason
    assert math.isfinite(PolicyRankCorrelation().bounds[0])
