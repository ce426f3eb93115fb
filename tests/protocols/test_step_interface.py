"""Every built-in baseline implements the step interface: [initial frame] + the frames of
step(start(r), actions) equal generate([r]) byte for byte, in any chunking, and stepping never
changes the state it was given (a planner branches futures from one state)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import ROOT, compose
from wfeval.models.protocol import StepOutput, has_step_interface, step_many
from wfeval.pipeline import build
from wfeval.pipeline.select import select_requests
from wfeval.storage.artifacts import ArtifactStore, read_array

GRID_MODELS = ("oracle", "static", "random_actions", "noisy", "blur", "lagged")


def _requests(store_dir, *overrides):
    cfg = compose(list(overrides))
    store = ArtifactStore(store_dir)
    return select_requests(build.build_benchmark(cfg), store=store, task=build.build_task(cfg),
                                 protocol=build.build_protocol(cfg), limit=None, shard=None)


@pytest.fixture(scope="module")
def grid_requests(tmp_path_factory):
    return _requests(tmp_path_factory.mktemp("store"), "benchmark.num_samples=3")


def _stepped(model, request, chunks):
    state = model.start(request)
    actions = list(request.controls["actions"])
    frames, i = [read_array(request.inputs["image"])[None]], 0
    for k in chunks:
        out = model.step(state, actions[i:i + k])
        assert isinstance(out, StepOutput) and out.frames.shape[0] == len(actions[i:i + k])
        frames.append(out.frames)
        state, i = out.state, i + k
    assert i >= len(actions)
    return np.concatenate(frames)


@pytest.mark.parametrize("name", GRID_MODELS)
def test_gridworld_baseline_steps_equal_its_open_loop_video(grid_requests, name):
    model = build.build_model(compose([f"model={name}"])).model
    assert has_step_interface(model)
    videos = [o["generated_video"] for o in model.generate(grid_requests)]
    for request, video in zip(grid_requests, videos):
        for chunks in ([1] * 15, [4, 4, 4, 3], [15], [2, 7, 6]):
            np.testing.assert_array_equal(_stepped(model, request, chunks), video)


@pytest.mark.parametrize("name", GRID_MODELS)
def test_stepping_never_changes_the_state_it_was_given(grid_requests, name):
    model = build.build_model(compose([f"model={name}"])).model
    request = grid_requests[0]
    state = model.start(request)
    first = model.step(state, [4, 4, 2])
    model.step(state, [1, 3, 3])  # another branch from the same state
    model.step(first.state, [2, 2])
    again = model.step(state, [4, 4, 2])
    np.testing.assert_array_equal(first.frames, again.frames)
    branches = step_many(model, [state, state], [[4, 4, 2], [1, 3, 3]])
    np.testing.assert_array_equal(branches[0].frames, first.frames)


def test_oracle_branches_differ_by_their_actions(grid_requests):
    model = build.build_model(compose(["model=oracle"])).model
    state = model.start(grid_requests[1])
    right, left = step_many(model, [state, state], [[4, 4], [3, 3]])
    assert not np.array_equal(right.frames, left.frames)


@pytest.mark.parametrize("game,models", [("atari_pong", ("game_oracle", "game_random_actions")),
                                              ("crafter", ("game_oracle", "game_random_actions"))])
def test_game_baseline_steps_equal_generate_byte_for_byte(tmp_path, game, models):
    pytest.importorskip("ale_py" if game.startswith("atari") else "crafter")
    requests = _requests(tmp_path, f"benchmark={game}", "benchmark.num_trajectories=1",
                         "benchmark.windows_per_trajectory=1", "benchmark.horizon=5")
    for name in models:
        model = build.build_model(compose([f"benchmark={game}", f"model={name}"])).model
        try:
            for request, out in zip(requests, model.generate(requests)):
                video = out["generated_video"]
                np.testing.assert_array_equal(_stepped(model, request, [1] * 5), video)
                np.testing.assert_array_equal(_stepped(model, request, [4, 1]), video)
                state = model.start(request)
                model.step(state, [1, 1, 1])  # a branch that leaves `state` as it was
                np.testing.assert_array_equal(model.step(state, request.controls["actions"][:2]).frames, video[1:3])
            if name == "game_oracle":
                for request, out in zip(requests, model.generate(requests)):
                    np.testing.assert_array_equal(out["generated_video"], read_array(request.references["video"]))
        finally:
            model.close()


def test_oracle_and_noisy_step_on_every_benchmark_the_oracle_serves(tmp_path):
    pytest.importorskip("ale_py")
    games = _requests(tmp_path / "a", "benchmark=atari_pong", "benchmark.num_trajectories=1",
                      "benchmark.windows_per_trajectory=1", "benchmark.horizon=4")
    folder = _requests(tmp_path / "f", "benchmark=folder", f"benchmark.dataset_root={ROOT / 'examples/datasets/gridworld_tiny'}")
    for name in ("oracle", "noisy"):
        model = build.build_model(compose([f"model={name}"])).model
        for request in [*games, *folder[:2]]:
            video = model.generate([request])[0]["generated_video"]
            n = len(request.controls["actions"])
            np.testing.assert_array_equal(_stepped(model, request, [1] * n), video)
            np.testing.assert_array_equal(_stepped(model, request, [n]), video)
        model.close()
