"""task=behavioural_fidelity on pusht (wfeval/benchmarks/pusht/reach.py): the reach episode against the
exact simulator state, the policy's perception against the simulator, and the calibration baselines."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import compose
from wfeval.pipeline import build
from wfeval.pipeline.runner import run_from_config
from wfeval.storage.artifacts import ArtifactStore

pytest.importorskip("gym_pusht")

SMALL = ["benchmark=pusht", "benchmark.num_trajectories=1", "task=behavioural_fidelity"]
MODELS = ("oracle", "noisy", "lagged", "static")


@pytest.fixture(scope="module")
def shared(tmp_path_factory):
    """One artifact store for the module: the start trajectory is recorded once, then read from its cache."""
    return tmp_path_factory.mktemp("reach_store")


@pytest.fixture(scope="module")
def requests(shared):
    cfg = compose(SMALL)
    bench = build.build_benchmark(cfg)
    store = ArtifactStore(shared)
    return bench, bench.requests(store=store, task=build.build_task(cfg), protocol=build.build_protocol(cfg))


@pytest.fixture(scope="module")
def fidelity(tmp_path_factory, shared):
    root = tmp_path_factory.mktemp("reach")
    out = {}
    for m in MODELS:
        cfg = compose([f"run.store_dir={shared}", "run.progress=off", *SMALL, f"model={m}",
                       "metric=[behavioural_fidelity,reward_error,return_prediction_error]"])
        summary = run_from_config(cfg, output_dir=root / m)
        out[m] = {key.split(".", 1)[1]: agg for key, agg in summary.results.items()}
    return out


def value(table, model, metric):
    agg = table[model][metric]
    assert agg.valid, (model, metric, agg.diagnostics)
    return agg.diagnostics["value"]


def test_the_policy_finds_the_agent_where_the_simulator_put_it():
    from wfeval.benchmarks.pusht.reach import perceived_agent
    from wfeval.benchmarks.pusht.simulator import PushTSimulator

    sim = PushTSimulator(96)
    for seed in range(6):
        found = perceived_agent(sim.reset(seed))
        assert np.linalg.norm(found - np.asarray(sim.pose()[:2])) < 1.5, (seed, found, sim.pose())  # a 5.3 px pixel
    assert perceived_agent(np.full((96, 96, 3), 255, np.uint8)) is None  # no agent drawn: none found


def test_reach_goals_lie_away_from_the_block_inside_the_arena_and_holding_still_never_reaches_them(requests):
    from wfeval.benchmarks.pusht import reach

    bench, samples = requests
    assert len(samples) == 4
    for request in samples:
        start, goal = reach.start_position(request), reach.reach_goal(request)
        assert np.linalg.norm(goal - start) == pytest.approx(reach.GOAL_PX)
        assert np.all(goal >= reach.MARGIN) and np.all(goal <= 512 - reach.MARGIN)
        episode = bench.fidelity_environment(request)
        assert [episode.step(start)[1:] for _ in range(16)] == [(0.0, False)] * 16  # a do-nothing policy: return 0


def test_the_real_perception_episode_walks_to_the_goal_and_the_frames_show_the_reward_the_state_gives(requests):
    from wfeval.benchmarks.gridworld.baselines import OracleModel
    from wfeval.protocols.behavioural_fidelity import BehaviouralFidelityDriver

    bench, samples = requests
    name, policy = next(iter(bench.fidelity_policies().items()))
    assert name == "walk_to_goal"
    driver = BehaviouralFidelityDriver(OracleModel(), name, policy, bench)
    for request in samples:
        real = driver.real_episode(request)
        # 120 px at about 16 px a step: reached on step 7, rewarded there only, the episode ends
        assert real["steps"] == 7 and real["rewards"] == [0.0] * 6 + [1.0], real
        assert real["return"] == pytest.approx(0.95 ** 6)
        seen = driver.run_one(request).metadata
        assert seen["behavioural_fidelity"]["return"] == pytest.approx(real["return"])  # the oracle sees the truth
        assert seen["reward_prediction"]["predicted"] == real["rewards"]  # the located agent agrees with the state


def test_behavioural_fidelity_on_pusht_is_one_for_the_oracle_and_zero_for_frozen_perception(fidelity):
    score = {m: value(fidelity, m, "behavioural_fidelity") for m in MODELS}
    assert score["oracle"] == 1.0 and score["static"] == 0.0, score  # static: the agent stops 40 px from its start
    assert 0.95 <= score["noisy"] <= 1.0, score  # noise of 10 levels barely moves the located centroid
    assert 0.75 <= score["lagged"] < 0.95, score  # perception one step late: the agent walks slower, arrives later
    assert value(fidelity, "oracle", "reward_error") == 0.0
    assert value(fidelity, "static", "reward_error") > 0.1


# -- task=policy_optimization (wfeval/benchmarks/pusht/optimization.py): the reach task for a tabular learner

OPTIMIZATION = ["benchmark=pusht", "benchmark.num_trajectories=1", "task=policy_optimization"]


@pytest.fixture(scope="module")
def optimization(tmp_path_factory, shared):
    root = tmp_path_factory.mktemp("reach_optimization")
    out = {}
    for m in ("oracle", "static"):
        cfg = compose([f"run.store_dir={shared}", "run.progress=off", *OPTIMIZATION, f"model={m}"])
        out[m] = {key.split(".", 1)[1]: agg for key, agg in run_from_config(cfg, output_dir=root / m).results.items()}
    return out


def test_a_move_is_a_target_from_the_agent_the_frame_shows_and_closeness_is_read_off_the_frame(requests):
    from wfeval.benchmarks.pusht import optimization as O, reach
    from wfeval.benchmarks.pusht.simulator import PushTSimulator

    _, samples = requests
    request = samples[0]
    start, goal = reach.start_position(request), reach.reach_goal(request)
    sim = PushTSimulator(96)
    frame = sim.place(reach.start_pose(request))
    command = O.command(request)
    assert np.allclose(command(frame, 0), start, atol=1.5)  # stay: the located agent itself
    assert np.allclose(command(frame, 1), start + [O.MOVE_PX, 0.0], atol=1.5)  # east: 60 px to the right
    assert command(np.full((96, 96, 3), 255, np.uint8), 1) == [*(start + [O.MOVE_PX, 0.0])]  # none seen: from the start
    toward = int(round(np.arctan2(*(goal - start)[::-1]) / (np.pi / 4))) % 8
    assert O.observer(request)(None, frame) == (toward, 2)  # the goal's sector, far
    assert O.reward(request, None, frame) == (pytest.approx(0.0, abs=0.02), False)  # 120 px away: closeness 0
    at_goal = sim.place([*goal, *reach.start_pose(request)[2:]])
    assert O.reward(request, None, at_goal)[0] == pytest.approx(1.0, abs=0.02)
    assert O.observer(request)(None, at_goal)[1] == 0  # reached


def test_policy_optimization_on_pusht_lifts_the_oracle_to_one_and_static_to_nothing(optimization):
    lift = optimization["oracle"]["optimization_lift"]
    interval = (lift.confidence_interval["low"], lift.confidence_interval["high"])
    assert lift.valid and lift.diagnostics["value"] == 1.0 and interval == (1.0, 1.0)
    ceiling = value(optimization, "oracle", "simulator_trained_return")
    floor = value(optimization, "oracle", "random_policy_return")
    assert ceiling == pytest.approx(2.788, abs=0.01) and floor == pytest.approx(0.883, abs=0.01)  # 4 starts, 2 seeds
    assert value(optimization, "static", "optimization_lift") <= 0.2  # frozen frames: no reward inside, a random policy
    assert value(optimization, "oracle", "exploitability") == 0.0
