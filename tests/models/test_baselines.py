"""The baselines bracket quality: oracle exact, static frozen, random_actions off-trajectory."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import compose
from wfeval.pipeline import build
from wfeval.storage.artifacts import ArtifactStore, read_array


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
        _model("random_actions").generate([stripped])
    assert "gridworld" in type(_model("lagged").model).cannot_serve(stripped)


def test_the_oracle_without_a_simulator_state_serves_the_reference_video(requests):
    import dataclasses

    stripped = dataclasses.replace(requests[0], metadata={})
    [out] = _model("oracle").generate([stripped])
    np.testing.assert_array_equal(out["generated_video"], read_array(requests[0].references["video"]))
    no_truth = dataclasses.replace(stripped, references={})
    assert "no ground truth" in type(_model("oracle").model).cannot_serve(no_truth)


def _out(name: str, requests, *overrides: str):
    model = build.build_model(compose([f"model={name}", *overrides]))
    return [o["generated_video"] for o in model.generate(requests)]


def test_noisy_adds_seeded_gaussian_noise_of_sigma_levels_clipped_to_uint8(requests):
    oracle = _out("oracle", requests)
    noisy = _out("noisy", requests, "model.sigma=12")
    residual = np.concatenate([(n.astype(float) - o).ravel() for n, o in zip(noisy, oracle)])
    assert noisy[0].dtype == np.uint8 and noisy[0].shape == oracle[0].shape
    assert abs(residual.mean()) < 0.1 and 11.5 < residual.std() < 12.5
    again = _out("noisy", requests[::-1], "model.sigma=12")[::-1]  # per sample, not per batch position
    assert all(np.array_equal(a, b) for a, b in zip(noisy, again))
    other_seed = _out("noisy", requests, "model.sigma=12", "model.seed=1")
    assert not np.array_equal(noisy[0], other_seed[0])
    assert all(np.array_equal(a, b) for a, b in zip(_out("noisy", requests, "model.sigma=0"), oracle))
    bright = _out("noisy", requests, "model.sigma=200")[0]
    assert bright.min() == 0 and bright.max() == 255  # clipped, not wrapped


def test_blur_smooths_every_frame_and_a_one_pixel_kernel_is_the_oracle(requests):
    from wfeval.benchmarks.gridworld.blur import gaussian_blur

    oracle = _out("oracle", requests)
    blurred = _out("blur", requests, "model.kernel_size=7", "model.sigma=2.0")
    assert blurred[0].dtype == np.uint8 and blurred[0].shape == oracle[0].shape
    roughness = [np.abs(np.diff(v.astype(float), axis=2)).mean() for v in (oracle[0], blurred[0])]
    assert roughness[1] < 0.6 * roughness[0]
    assert all(np.array_equal(a, b) for a, b in zip(_out("blur", requests, "model.kernel_size=1"), oracle))
    flat = np.full((2, 9, 9, 3), 77, np.uint8)
    assert np.array_equal(gaussian_blur(flat, 5, 1.0), flat)
    with pytest.raises(ValueError, match="odd integer"):
        _out("blur", requests, "model.kernel_size=4")


def test_lagged_applies_every_action_one_step_late(requests):
    from wfeval.benchmarks.gridworld import world

    lagged = _out("lagged", requests)
    for request, video in zip(requests, lagged):
        actions = tuple(request.controls["actions"])
        expected, _ = world.rollout(world.WorldState.from_dict(request.metadata["world"]), (0,) + actions[:-1])
        np.testing.assert_array_equal(video, expected)
    assert all(np.array_equal(a, b) for a, b in zip(_out("lagged", requests, "model.lag=0"), _out("oracle", requests)))


def test_forgetful_is_the_oracle_for_its_horizon_then_redraws_the_static_content(tmp_path):
    cfg = compose(["benchmark.num_samples=2", "benchmark.num_frames=40"])
    long = build.build_benchmark(cfg).requests(store=ArtifactStore(tmp_path), task=build.build_task(cfg),
                                               protocol=build.build_protocol(cfg))
    forgetful, oracle = _model("forgetful"), _model("oracle")
    for request, out, truth in zip(long, forgetful.generate(long), oracle.generate(long)):
        video, reference = out["generated_video"], truth["generated_video"]
        np.testing.assert_array_equal(video[:16], reference[:16])  # horizon 16: frames 0..15 exact
        assert all(not np.array_equal(video[t], reference[t]) for t in range(16, 40))
        # the layout, the agent and the objects stay exact: only the textures changed
        assert (read_array(request.references["video"])[20] == video[20]).all(axis=-1).mean() < 0.5
        state = forgetful.model.start(request)
        actions = list(request.controls["actions"])
        first = forgetful.model.step(state, actions[:10])
        rest = forgetful.model.step(first.state, actions[10:])
        np.testing.assert_array_equal(np.concatenate([video[:1], first.frames, rest.frames]), video)


def test_lagged_and_random_actions_run_on_a_recorded_game_through_both_interfaces(tmp_path):
    pytest.importorskip("ale_py")
    from wfeval.benchmarks.recorded.baselines import continue_game

    cfg = compose(["benchmark=atari_pong", "benchmark.num_trajectories=1", "benchmark.windows_per_trajectory=2"])
    game = build.build_benchmark(cfg).requests(store=ArtifactStore(tmp_path), task=build.build_task(cfg),
                                               protocol=build.build_protocol(cfg))
    lagged, random_actions = _model("lagged"), _model("random_actions")
    noop = list(game[0].controls["action_names"]).index("NOOP")
    for request in game:
        actions = list(request.controls["actions"])
        [out] = lagged.generate([request])
        np.testing.assert_array_equal(out["generated_video"], continue_game(request, [noop] + actions[:-1]))
        [shuffled] = random_actions.generate([request])
        [own] = _model("game_random_actions").generate([request])
        np.testing.assert_array_equal(shuffled["generated_video"], own["generated_video"])
        for model, video in ((lagged, out["generated_video"]), (random_actions, shuffled["generated_video"])):
            first = model.model.step(model.model.start(request), actions[:5])
            rest = model.model.step(first.state, actions[5:])
            np.testing.assert_array_equal(np.concatenate([video[:1], first.frames, rest.frames]), video)
@pytest.mark.parametrize("name", ["oracle", "static", "random_actions", "noisy", "blur", "lagged"])
def test_step_many_gives_every_state_what_step_gives_it(requests, name, monkeypatch):
    """The simulator baselines' step_many simulates and renders a repeated world state once: the same
    frames and states as one step call per state (a planner's candidates share their first actions)."""
    from wfeval.benchmarks.gridworld import world

    model = build.build_model(compose([f"model={name}"])).model
    rng = np.random.default_rng(3)
    starts = [model.start(r) for r in requests[:2]]
    states = [starts[i % 2] for i in range(24)]
    plans = [list(rng.integers(0, 5, 6 if i % 5 else 3)) for i in range(24)]
    plans[1] = plans[0][:4]  # a shared prefix
    plans[2:4] = [plans[0], plans[0]]  # the same start (sample 0) and the same plan
    simulated, real_step = [], world.step
    monkeypatch.setattr(world, "step", lambda w, a: simulated.append(1) or real_step(w, a))
    many = model.step_many(states, plans)
    if name != "static":  # the true world stepped once per distinct (state, action), not once per candidate
        assert 0 < len(simulated) <= sum(len(p) for p in plans) - len(plans[0]) - len(plans[1])
    for state, plan, out in zip(states, plans, many):
        one = model.step(state, plan)
        np.testing.assert_array_equal(out.frames, one.frames)
        assert np.array_equal(out.state, one.state) if isinstance(one.state, np.ndarray) else out.state == one.state
    after = model.step_many([m.state for m in many[:3]], [[1, 2], [], [4]])  # stepping on from those states
    for state, plan, out in zip([m.state for m in many[:3]], [[1, 2], [], [4]], after):
        np.testing.assert_array_equal(out.frames, model.step(state, plan).frames)


def test_a_baseline_with_a_step_of_its_own_keeps_it_in_step_many(requests):
    """forgetful redraws the textures after ``horizon`` steps in its own ``step``: a planner's batched
    ``step_many`` must give the same frames, not the true simulator's shortcut."""
    model = build.build_model(compose(["model=forgetful", "model.horizon=2"])).model
    state = model.start(requests[0])
    plans = [[1, 2, 3, 4], [4, 4, 1], [0, 0, 0, 0, 0]]
    many = model.step_many([state] * 3, plans)
    for plan, out in zip(plans, many):
        np.testing.assert_array_equal(out.frames, model.step(state, plan).frames)
    truth = build.build_model(compose(["model=oracle"])).model
    assert not np.array_equal(many[0].frames[-1], truth.step(truth.start(requests[0]), plans[0]).frames[-1])
