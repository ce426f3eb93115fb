"""The baselines bracket quality: oracle exact, static frozen, random_actions off-trajectory."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import compose
from wfeval.artifacts import ArtifactStore, read_array
from wfeval.pipeline import build


@pytest.fixture(scope="module")
def requests(tmp_path_factory):
    cfg = compose(["benchmark.num_samples=6"])
    store = ArtifactStore(tmp_path_factory.mktemp("store"))
    return build.build_benchmark(cfg).requests(store=store, task=build.build_task(cfg),
                                               protocol=build.build_protocol(cfg))


def _model(name: str):
    return build.build_model(compose([f"model={name}"]))


def test_oracle_reproduces_the_reference_video_exactly(requests):
    for request, out in zip(requests, _model("oracle").generate(requests)):
        np.testing.assert_array_equal(out["generated_video"], read_array(request.references["video"]))


def test_static_repeats_the_initial_frame_for_every_step(requests):
    for request, out in zip(requests, _model("static").generate(requests)):
        video = out["generated_video"]
        assert video.shape == (16, 64, 64, 3) and video.dtype == np.uint8
        assert (video == read_array(request.inputs["image"])[None]).all()


def test_random_actions_starts_right_but_leaves_the_true_trajectory(requests):
    outputs = _model("random_actions").generate(requests)
    differs = 0
    for request, out in zip(requests, outputs):
        reference = read_array(request.references["video"])
        np.testing.assert_array_equal(out["generated_video"][0], reference[0])
        differs += not np.array_equal(out["generated_video"], reference)
    assert differs == len(requests)
    again = _model("random_actions").generate(requests)
    assert all(np.array_equal(a["generated_video"], b["generated_video"]) for a, b in zip(outputs, again))


def test_simulator_baselines_refuse_requests_without_world_state(requests):
    import dataclasses

    stripped = dataclasses.replace(requests[0], metadata={})
    with pytest.raises(ValueError, match="only run on the gridworld benchmark"):
        _model("oracle").generate([stripped])
