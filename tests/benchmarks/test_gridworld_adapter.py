"""The gridworld benchmark yields stable, deterministic samples with complete ground truth."""

from __future__ import annotations

import numpy as np

from tests.conftest import compose
from wfeval.pipeline import build
from wfeval.storage.artifacts import ArtifactStore, read_array


def _requests(tmp_path, *overrides):
    cfg = compose(list(overrides))
    return build.build_benchmark(cfg).requests(store=ArtifactStore(tmp_path), task=build.build_task(cfg),
                                               protocol=build.build_protocol(cfg))


def test_samples_have_stable_ids_inputs_actions_reference_and_positions(tmp_path):
    requests = _requests(tmp_path, "benchmark.num_samples=3")
    assert [r.sample_id for r in requests] == ["gridworld-test-00000", "gridworld-test-00001", "gridworld-test-00002"]
    first = requests[0]
    assert (first.benchmark_id, first.split, first.task_id, first.protocol) == ("gridworld", "test", "action_video", "open_loop")
    video = read_array(first.references["video"])
    assert video.shape == (16, 64, 64, 3) and video.dtype == np.uint8
    np.testing.assert_array_equal(read_array(first.inputs["image"]), video[0])
    assert len(first.controls["actions"]) == 15
    assert len(first.metadata["agent_positions"]) == 16
    assert first.generation["fps"] == 8 and first.generation["num_frames"] == 16


def test_the_same_config_gives_byte_identical_samples_and_another_seed_does_not(tmp_path):
    a = _requests(tmp_path / "a", "benchmark.num_samples=4")
    b = _requests(tmp_path / "b", "benchmark.num_samples=4")
    c = _requests(tmp_path / "c", "benchmark.num_samples=4", "benchmark.seed=7")
    assert [r.references["video"].sha256 for r in a] == [r.references["video"].sha256 for r in b]
    assert [r.references["video"].sha256 for r in a] != [r.references["video"].sha256 for r in c]


def test_more_samples_keep_the_first_ones_unchanged(tmp_path):
    few = _requests(tmp_path, "benchmark.num_samples=2")
    many = _requests(tmp_path, "benchmark.num_samples=5")
    assert [r.to_dict() for r in few] == [r.to_dict() for r in many[:2]]
