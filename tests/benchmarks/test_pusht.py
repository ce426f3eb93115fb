"""benchmark=pusht: gym-pusht recorded offline with continuous actions, its pinned hash reproduced in
a fresh process, its baselines bracketing the oracle, its behaviour policy pushing the block."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from tests.conftest import PUSHT_GOALS, ROOT, compose, run_fresh, user_environ
from wfeval.pipeline import build
from wfeval.pipeline.runner import run_from_config
from wfeval.results import dataset_hash
from wfeval.storage.artifacts import ArtifactStore, read_array

pytest.importorskip("gym_pusht")

SMALL = ["benchmark=pusht", "benchmark.num_trajectories=2", "benchmark.windows_per_trajectory=2"]

RECORD = """
import hashlib, json, sys
from tests.conftest import compose
from wfeval.pipeline import build
from wfeval.results import dataset_hash
from wfeval.storage.artifacts import ArtifactStore, read_array
cfg = compose(["benchmark=pusht"])
requests = build.build_benchmark(cfg).requests(store=ArtifactStore(sys.argv[1]), task=build.build_task(cfg),
                                               protocol=build.build_protocol(cfg))
frames = hashlib.sha256(b"".join(read_array(r.references["video"]).tobytes() for r in requests)).hexdigest()
print(json.dumps({"hash": dataset_hash(requests), "frames": frames, "n": len(requests)}))
"""


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One artifact store for the module: each recorded trajectory (a recording's key: its config and index)
    is recorded once and read from the store's recording cache by every later test and run."""
    return tmp_path_factory.mktemp("pusht_store")


def _requests(overrides, store):
    cfg = compose(overrides)
    bench = build.build_benchmark(cfg)
    return bench, bench.requests(store=store, task=build.build_task(cfg), protocol=build.build_protocol(cfg))


@pytest.mark.subprocess  # the recording made again in a fresh interpreter (pymunk, pygame and OpenCV loaded anew)
def test_a_recording_made_in_a_fresh_process_is_byte_identical_and_matches_the_pinned_hash(tmp_path, shared):
    env = {k: v for k, v in user_environ().items() if k not in ("SDL_VIDEODRIVER", "DISPLAY")}  # no display
    env["PYTHONPATH"] = str(ROOT)
    done = run_fresh(["-c", RECORD, tmp_path / "fresh"], ROOT, env, timeout=600)
    assert done.returncode == 0, done.stderr[-3000:]
    fresh = json.loads(done.stdout.strip().splitlines()[-1])
    cfg = compose(["benchmark=pusht"])
    assert fresh["n"] == cfg.benchmark.evidence.min_valid.default == 32
    assert fresh["hash"] == cfg.benchmark.evidence.dataset_hash
    _, here = _requests(["benchmark=pusht"], ArtifactStore(shared))
    frames = hashlib.sha256(b"".join(read_array(r.references["video"]).tobytes() for r in here)).hexdigest()
    assert frames == fresh["frames"] and dataset_hash(here) == fresh["hash"]


def test_samples_declare_the_continuous_action_space_and_carry_float32_target_positions(shared):
    bench, requests = _requests(SMALL, ArtifactStore(shared))
    assert bench.spec.action_space.describe() == "continuous (2,) float32 in [0, 512]"
    assert len(requests) == 4
    for r in requests:
        actions = np.asarray(r.controls["actions"], dtype=np.float64)
        assert actions.shape == (16, 2) and r.controls["action_space"]["kind"] == "continuous"
        assert np.array_equal(actions, actions.astype(np.float32)) and actions.min() >= 0 and actions.max() <= 512
        assert read_array(r.references["video"]).shape == (17, 96, 96, 3)
        assert len(r.controls["context_actions"]) == 1


def test_the_pusher_moves_smoothly_and_pushes_the_block_unlike_random_targets(shared):
    """Demonstration-like data: consecutive targets at most `speed` px plus jitter apart, and the block
    moved in most windows; uniform targets jump across the arena."""
    _, pusher = _requests(["benchmark=pusht", "benchmark.num_trajectories=4"], ArtifactStore(shared))
    _, rand = _requests(["benchmark=pusht", "benchmark.num_trajectories=4", "benchmark.policy.kind=random"],
                        ArtifactStore(shared))

    def jumps(requests):
        return np.concatenate([np.linalg.norm(np.diff(np.asarray(r.controls["actions"]), axis=0), axis=1)
                               for r in requests])

    def block_moves(requests):
        moved = []
        for r in requests:
            states = np.asarray(r.metadata["step_info"]["state"])
            moved.append(float(np.abs(states[:, 2:4] - states[0, 2:4]).max()))
        return np.asarray(moved)

    assert jumps(pusher).max() < 25.0 + 5 * 3.0 * np.sqrt(2)
    assert jumps(rand).mean() > 100.0  # half the steps repeat (sticky), the others jump across the arena
    assert (block_moves(pusher) > 5.0).mean() >= 0.5


def test_restoring_a_snapshot_continues_exactly_as_the_original_run():
    from wfeval.benchmarks.pusht.simulator import PushTSimulator

    sim = PushTSimulator()
    sim.reset(7)
    rng = np.random.default_rng(0)
    actions = rng.uniform(100, 400, (30, 2)).tolist()
    for a in actions[:12]:
        sim.step(a)
    snap, state_at, frame_at = sim.snapshot(), sim.state(), sim.frame()
    straight = [sim.step(a).frame for a in actions[12:]]
    other = PushTSimulator()
    other.restore(snap)
    assert other.state() == state_at and np.array_equal(other.frame(), frame_at)
    again = [other.step(a).frame for a in actions[12:]]
    assert all(np.array_equal(a, b) for a, b in zip(straight, again))
    assert not np.array_equal(straight[0], straight[-1])  # the world moved


def test_a_frame_is_the_observation_gym_pusht_renders_pixel_for_pixel():
    """PushTSimulator.frame reads the screen row by row where gym-pusht's _render copies a transposed view."""
    from wfeval.benchmarks.pusht.simulator import PushTSimulator

    rng = np.random.default_rng(1)
    for size, start in ((96, 3), (61, 11)):
        sim = PushTSimulator(size)
        frames, rendered = [sim.reset(start)], [sim.env._render()]
        for action in rng.uniform(0, 512, (12, 2)):
            frames.append(sim.step(action).frame)
            rendered.append(sim.env._render())
        frames.append(sim.place([100.0, 400.0, 300.0, 200.0, 1.0]))
        rendered.append(sim.env._render())
        assert all(f.shape == (size, size, 3) and f.dtype == np.uint8 for f in frames)
        assert all(np.array_equal(f, r) for f, r in zip(frames, rendered))
        assert len({f.tobytes() for f in frames}) > 10  # the agent and the block moved between them


@pytest.fixture(scope="module")
def baselines(tmp_path_factory, shared):
    root = tmp_path_factory.mktemp("pusht_baselines")
    out = {}
    for model in ("oracle", "static", "noisy", "lagged", "random_actions", "game_oracle", "game_random_actions"):
        cfg = compose([*SMALL, f"model={model}", f"run.store_dir={shared}", "run.progress=off",
                       "run.report=false", "metric=[psnr]"])
        summary = run_from_config(cfg, output_dir=root / model)
        agg = summary.results["pusht.psnr"]
        assert agg.valid and agg.n_valid == 4, (model, agg.diagnostics)
        out[model] = agg.diagnostics["value"]
    return out


def test_the_oracle_replays_the_simulator_exactly_and_every_baseline_scores_below_it(baselines):
    assert baselines["oracle"] == baselines["game_oracle"] == 100.0
    for model in ("static", "noisy", "lagged", "random_actions", "game_random_actions"):
        assert baselines[model] < 40.0, model
    assert baselines["lagged"] > baselines["random_actions"]  # late but the right commands beats wrong ones


@pytest.fixture(scope="module")
def controllability(tmp_path_factory, shared):
    """task=controllability: each sample's counterfactual action sequences answered by the simulator."""
    root = tmp_path_factory.mktemp("pusht_control")
    out = {}
    for model in ("oracle", "lagged", "static"):
        cfg = compose([*SMALL, "task=controllability", f"model={model}", f"run.store_dir={shared}",
                       "run.progress=off", "run.report=false", "metric=[action_sensitivity,idm_accuracy]",
                       "task.data.counterfactual.count=2"])
        summary = run_from_config(cfg, output_dir=root / model)
        out[model] = {m: summary.results[f"pusht.{m}"] for m in ("action_sensitivity", "idm_accuracy")}
        for m, agg in out[model].items():
            assert agg.valid and agg.n_valid == 4, (model, m, agg.diagnostics)
    return out


def test_counterfactuals_in_the_simulator_give_lagged_a_positive_sensitivity_and_static_none(controllability):
    lagged = controllability["lagged"]["action_sensitivity"]
    assert lagged.diagnostics["value"] > 1.0 and lagged.confidence_interval["low"] > 0.0
    assert controllability["static"]["action_sensitivity"].diagnostics["value"] == 0.0
    assert controllability["oracle"]["action_sensitivity"].diagnostics["value"] > lagged.diagnostics["value"]


def test_idm_accuracy_on_pusht_ranks_the_oracle_at_its_ceiling_and_a_frozen_model_at_chance(controllability):
    """The shipped Push-T IDM (tests/recipes/test_pusht_recipes.py) reads target positions off the frames."""
    oracle, lagged, static = (controllability[m]["idm_accuracy"].diagnostics for m in ("oracle", "lagged", "static"))
    assert oracle["idm"]["name"] == "pusht" and oracle["idm"]["pinned"] and oracle["idm"]["kind"] == "continuous"
    # the oracle's frames are the reference's: it scores the ceiling exactly
    assert oracle["value"] == pytest.approx(oracle["ceiling"]) and oracle["ceiling"] > 0.9
    # static holds the first frame: exactly what chance is read on; a target position is mostly where the
    # agent already is, so chance is well above 0, and still far below the ceiling
    assert static["value"] == pytest.approx(static["chance"]) and 0.1 < static["chance"] < oracle["ceiling"] - 0.3
    assert static["chance"] == pytest.approx(oracle["chance"])  # the same first frames whatever the model
    # one step late: most of the way from chance to the ceiling, not all of it
    assert static["chance"] + 0.3 < lagged["value"] < oracle["ceiling"]


@pytest.fixture(scope="module")
def probing(tmp_path_factory, shared):
    """task=probing against the exact state: agent x, y, block x, y, the block's angle as sin and cos."""
    root = tmp_path_factory.mktemp("pusht_probing")
    out = {}
    for model in ("state_oracle", "random_projection"):
        cfg = compose([*SMALL, "task=probing", f"model={model}",
                       f"run.store_dir={shared}", "run.progress=off", "run.report=false",
                       "protocol.train_episodes=8", "metric=[probe_r2]"])
        summary = run_from_config(cfg, output_dir=root / model)
        agg = summary.results["pusht.probe_r2"]
        assert agg.valid and agg.n_valid == 4, (model, agg.diagnostics)
        out[model] = agg
    return out


def test_probes_read_the_exact_state_off_the_state_oracle_and_far_less_off_a_random_projection(probing):
    from wfeval.benchmarks.pusht.simulator import STATE_VARIABLES

    assert [v.name for v in STATE_VARIABLES] == ["agent_x", "agent_y", "block_x", "block_y", "block_sin", "block_cos"]
    assert probing["state_oracle"].diagnostics["value"] >= 0.9
    assert probing["random_projection"].confidence_interval["high"] < 0.6


#: the goal_reaching runs (tests/conftest.py: PUSHT_GOALS, shared with tests/protocols/test_plan_audit.py)
GOALS = PUSHT_GOALS


@pytest.fixture(scope="module")
def goal_reaching(pusht_goal_runs):
    """task=goal_reaching: CEM over target positions, imagined with the model, acted in the true simulator;
    state_oracle: latent planning, true futures encoded."""
    out = {}
    for model in ("oracle", "random_actions", "state_oracle"):
        agg = pusht_goal_runs[model]["goal_success"]
        assert agg["valid"] and agg["n_valid"] == 4, (model, agg["diagnostics"])
        out[model] = agg["value"]
    return out


def test_goals_are_recorded_block_poses_out_of_the_start_s_reach(shared):
    from wfeval.benchmarks.pusht.goals import REACH_COVERAGE, PushTGoalEnvironment
    from wfeval.benchmarks.pusht.simulator import overlap

    _, requests = _requests(GOALS, ArtifactStore(shared))
    for r in requests:
        goal, env = r.metadata["goal"], PushTGoalEnvironment(r)
        assert goal["in_distribution"] and not goal["reached_at_start"] and 3 <= goal["distance"] <= 16
        assert overlap(env.sim.env, goal["start_pose"][2:], goal["pose"][2:]) < REACH_COVERAGE
        assert not env.at_goal and np.array_equal(env.frame(), read_array(r.inputs["image"]))
        assert r.references == {} and "actions" not in r.controls


def test_planning_with_the_true_simulator_reaches_goals_random_actions_do_not(goal_reaching):
    assert goal_reaching["oracle"] >= goal_reaching["random_actions"] + 0.5
    assert goal_reaching["state_oracle"] > goal_reaching["random_actions"]  # in latent space, over vector plans


def test_the_pinned_goal_reaching_hash_matches_a_fresh_build(shared):
    _, requests = _requests(["benchmark=pusht", "task=goal_reaching"], ArtifactStore(shared))
    assert len(requests) == 32
    assert dataset_hash(requests) == compose(["task=goal_reaching"]).task.metadata.dataset_hash.pusht
    # task=policy_optimization builds the same goal samples (its task.data.goal is goal_reaching's)
    optimization = compose(["task=policy_optimization"]).task
    assert optimization.data.goal == compose(["task=goal_reaching"]).task.data.goal
    assert optimization.metadata.dataset_hash.pusht == dataset_hash(requests)


def test_the_scripted_pushers_follow_the_demonstration_with_known_noise_within_the_bounds(shared):
    from wfeval.benchmarks.recorded.policy_evaluation import FollowDemonstration
    from wfeval.protocols.policies import PolicyContext, policy_space_of

    bench, requests = _requests(SMALL, ArtifactStore(shared))
    pushers = bench.scripted_policies()
    assert list(pushers) == ["demonstrator", "noise_8px", "noise_32px", "random"]  # best first
    space, names = policy_space_of(requests[0])
    offsets, follow = {"noise_8px": [], "noise_32px": []}, []
    for r in requests:
        demo = np.asarray(r.controls["actions"], np.float32)
        for t in range(len(demo)):
            context = PolicyContext(r, t, (), names, len(demo), 42, space)
            acts = {name: p.act(None, context) for name, p in pushers.items()}
            assert all(a.dtype == np.float32 and a.shape == (2,) and ((a >= 0) & (a <= 512)).all() for a in acts.values())
            assert np.array_equal(acts["demonstrator"], demo[t])
            assert np.array_equal(acts["noise_8px"], pushers["noise_8px"].act(None, context))  # seeded: the same again
            for name in offsets:
                offsets[name].extend((acts[name] - demo[t]).tolist())
            half = FollowDemonstration("follow_50", 0.5).act(None, context)  # the games' set works on vectors too
            follow.append(np.array_equal(half, demo[t]))
    assert 6.5 < np.std(offsets["noise_8px"]) < 9.5 and 26.0 < np.std(offsets["noise_32px"]) < 38.0
    assert 0.3 < np.mean(follow) < 0.7


@pytest.fixture(scope="module")
def policy_evaluation(tmp_path_factory, shared):
    """task=policy_evaluation: the four pushers inside the model and in the true simulator, 4 starts."""
    root = tmp_path_factory.mktemp("pusht_policies")
    out = {}
    for model in ("oracle", "static"):
        cfg = compose([*SMALL, "task=policy_evaluation", f"model={model}", f"run.store_dir={shared}",
                       "run.progress=off", "run.report=false", "metric=[policy_rank_correlation,return_error]"])
        summary = run_from_config(cfg, output_dir=root / model)
        rows = [json.loads(line) for line in (root / model / "generations.jsonl").read_text().splitlines()]
        out[model] = ({k.split(".", 1)[1]: a for k, a in summary.results.items()}, rows)
    return out


def test_the_pushers_skill_order_holds_in_the_simulator_and_the_oracle_ranks_them_exactly(policy_evaluation):
    results, rows = policy_evaluation["oracle"]
    assert results["policy_rank_correlation"].diagnostics["value"] == 1.0
    assert results["return_error"].diagnostics["value"] == 0.0
    true = np.array([[v["return"] for v in r["request"]["metadata"]["policy_evaluation"]["true"].values()]
                     for r in rows])
    assert true.shape == (4, 4) and (true[:, 0] == 16.0).all()  # the demonstrator reproduces the demonstration
    assert (np.diff(true.mean(axis=0)) < -0.02).all()  # demonstrator > noise 8 px > noise 32 px > random
    sources = {v["reward_source"] for r in rows for v in r["result"]["metadata"]["policy_evaluation"]["model"].values()}
    assert sources == {"frames"}  # objective_from_frames: the oracle's own reward (the game's coverage) is not it


def test_a_model_that_ignores_the_pushers_actions_ranks_nothing(policy_evaluation):
    results, _ = policy_evaluation["static"]
    assert results["policy_rank_correlation"].diagnostics["value"] == 0.0
    assert results["return_error"].diagnostics["value"] > 0.05


def test_the_audit_s_pixel_success_agrees_with_the_coverage_criterion_on_real_frames(shared):
    import math

    from wfeval.benchmarks.pusht.goals import REACH_COVERAGE, PushTGoalEnvironment
    from wfeval.benchmarks.pusht.simulator import overlap

    store = ArtifactStore(shared)
    one = ["benchmark=pusht", "benchmark.num_trajectories=1"]
    _, plain = _requests(one, store)
    _, goals = _requests([*one, "task=goal_reaching"], store)
    rng, said, truth = np.random.default_rng(0), [], []
    for p, g in zip(plain, goals):
        env = PushTGoalEnvironment(g)
        demo = np.asarray(p.controls["actions"], np.float64)
        plans = np.stack([demo, *(np.clip(demo + rng.normal(0, s, demo.shape), 0, 512) for s in (4, 16))])
        frames, states = env.true_futures(plans)
        said.extend((env.distances(frames) <= env.reach_px).ravel())
        truth.extend(overlap(env.sim.env, [s[2], s[3], math.atan2(s[4], s[5])], env.goal_pose[2:]) >= REACH_COVERAGE
                     for s in states.reshape(-1, 6))
    said, truth = np.array(said), np.array(truth)
    assert len(said) == 192 and truth.sum() >= 10 and (~truth).sum() >= 100  # both outcomes occur
    assert (said == truth).mean() >= 0.95
