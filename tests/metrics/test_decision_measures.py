"""Behavioural fidelity (task=behavioural_fidelity) and reward prediction (task=behavioural_fidelity on the
gridworld, task=reward_prediction on the recorded games) through the real pipeline: simulator truth and
the calibration baselines."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import compose
from wfeval.functional import rewards as R
from wfeval.pipeline import build
from wfeval.pipeline.runner import run_from_config
from wfeval.storage.artifacts import ArtifactStore

GRID_MODELS = ("oracle", "noisy", "lagged", "random_actions", "static")
GAMES = {"orby": ["benchmark=orby", "benchmark.num_trajectories=4", "benchmark.windows_per_trajectory=4"],
         "atari_pong": ["benchmark=atari_pong", "benchmark.num_trajectories=2", "benchmark.windows_per_trajectory=4",
                        "benchmark.warmup_steps=5", "benchmark.horizon=32"]}
GAME_MODELS = ("oracle", "random_actions", "lagged", "static")


def _run(root, name, overrides):
    cfg = compose([f"run.store_dir={root / 'store'}", "run.progress=off", "run.report=false", *overrides])
    summary = run_from_config(cfg, output_dir=root / name)
    return {key.split(".", 1)[1]: agg for key, agg in summary.results.items()}


@pytest.fixture(scope="module")
def grid(tmp_path_factory):
    root = tmp_path_factory.mktemp("behaviour")
    metrics = "metric=[behavioural_fidelity,reward_error,return_prediction_error]"
    return {m: _run(root, m, ["task=behavioural_fidelity", "benchmark.num_samples=8", metrics, f"model={m}"])
            for m in GRID_MODELS}


@pytest.fixture(scope="module")
def orby(tmp_path_factory):
    pytest.importorskip("tiny_jepa")
    root = tmp_path_factory.mktemp("behaviour_orby")
    return {m: _run(root, m, ["task=behavioural_fidelity", *ORBY, "metric=[behavioural_fidelity]", f"model={m}"])
            for m in ("oracle", "noisy", "random_actions", "static")}


@pytest.fixture(scope="module", params=list(GAMES))
def game(request, tmp_path_factory):
    family = request.param
    pytest.importorskip("tiny_jepa" if family == "orby" else "ale_py")
    root = tmp_path_factory.mktemp(f"reward_{family}")
    metrics = "metric=[reward_error,return_prediction_error]"
    return family, {m: _run(root, m, ["task=reward_prediction", *GAMES[family], metrics, f"model={m}"])
                    for m in GAME_MODELS}


def value(table, model, metric):
    agg = table[model][metric]
    assert agg.valid, (model, metric, agg.diagnostics)
    return agg.diagnostics["value"]


def test_reward_formulas_on_hand_computed_episodes():
    assert R.discounted_return([0, 0, 1], 0.5) == 0.25
    assert R.step_reward_error([0, 1], [0.5, 0.5]) == 0.25
    assert R.horizon_return_error([0, 0, 1], [1, 0, 0], 0.5) == 0.75
    # the mean reward over both episodes is 1/4: episode 1 errors (1/16 + 9/16)/2, episode 2 1/16 each
    chance = R.mean_reward_chance([[0, 1], [0, 0]], R.step_reward_error)
    assert chance == pytest.approx(((1 / 16 + 9 / 16) / 2 + 1 / 16) / 2)


ORBY = ["benchmark=orby", "benchmark.num_trajectories=4", "benchmark.windows_per_trajectory=2"]


@pytest.mark.parametrize("family,overrides", [("gridworld", ["benchmark.num_samples=3"]), ("orby", ORBY)])
def test_the_real_perception_return_is_the_shortest_path_return_of_the_simulator(tmp_path, family, overrides):
    from wfeval.benchmarks.gridworld.baselines import OracleModel
    from wfeval.protocols.behavioural_fidelity import BehaviouralFidelityDriver

    if family == "orby":
        pytest.importorskip("tiny_jepa")
    cfg = compose([*overrides, "task=behavioural_fidelity"])
    bench = build.build_benchmark(cfg)
    requests = bench.requests(store=ArtifactStore(tmp_path), task=build.build_task(cfg),
                              protocol=build.build_protocol(cfg))
    name, policy = next(iter(bench.fidelity_policies().items()))  # the best: shortest_path, seek_goal
    driver = BehaviouralFidelityDriver(OracleModel(), name, policy, bench)
    for request in requests:
        distance = int(request.metadata["goal"]["distance"])  # the shortest path, in steps
        real = driver.real_episode(request)
        assert real["steps"] == distance and real["rewards"] == [0.0] * (distance - 1) + [1.0]
        assert real["return"] == pytest.approx(0.95 ** (distance - 1))
        seen = driver.run_one(request).metadata
        assert seen["behavioural_fidelity"]["return"] == pytest.approx(real["return"])  # the oracle sees the truth
        if family == "gridworld":
            assert seen["reward_prediction"]["predicted"] == real["rewards"]


def test_the_orby_policy_finds_the_agent_where_the_simulator_put_it():
    pytest.importorskip("tiny_jepa")
    from tiny_jepa import OrbyWorld

    from wfeval.benchmarks.orby.behaviour import blobs
    from wfeval.benchmarks.orby.simulator import to_uint8

    for seed in range(5):
        world = OrbyWorld(seed=seed)
        found = blobs(to_uint8(world.render()))
        nearest = np.sqrt(((found - np.asarray(world.agent)) ** 2).sum(axis=1)).min()
        assert nearest < 0.5, (seed, found, world.agent)


def test_behavioural_fidelity_is_one_for_the_oracle_and_low_for_frozen_perception(grid):
    fidelity = {m: value(grid, m, "behavioural_fidelity") for m in GRID_MODELS}
    assert fidelity["oracle"] == 1.0 and fidelity["noisy"] == 1.0, fidelity  # noise does not fool the locator
    assert fidelity["static"] <= 0.2 and fidelity["random_actions"] <= 0.5, fidelity
    assert fidelity["random_actions"] < fidelity["lagged"] < 1.0, fidelity  # one step late: the goal overshot


def test_behavioural_fidelity_on_orby_ranks_the_baselines_as_on_the_gridworld(orby):
    fidelity = {m: value(orby, m, "behavioural_fidelity") for m in orby}
    assert fidelity["oracle"] == 1.0 and fidelity["noisy"] >= 0.95, fidelity
    assert fidelity["static"] <= 0.2 and fidelity["static"] < fidelity["random_actions"] <= 0.6, fidelity


def test_reward_prediction_on_the_gridworld_beats_chance_only_when_the_frames_show_the_goal(grid):
    error = {m: value(grid, m, "reward_error") for m in GRID_MODELS}
    chance = grid["oracle"]["reward_error"].diagnostics["chance"]
    assert {grid[m]["reward_error"].diagnostics["chance"] for m in GRID_MODELS} == {chance}  # same actions for all
    assert error["oracle"] == 0.0 and value(grid, "oracle", "return_prediction_error") == 0.0
    assert grid["oracle"]["reward_error"].diagnostics["reward_source"] == ("frames",)
    for frozen in ("static", "random_actions", "lagged"):  # never see the agent on the goal in time
        assert error[frozen] > chance > 0.0, (frozen, error, chance)


def test_reward_prediction_on_the_games_is_exact_for_the_oracle_and_skips_a_model_without_reward(game):
    family, table = game
    assert value(table, "oracle", "reward_error") == 0.0 and value(table, "oracle", "return_prediction_error") == 0.0
    chance = table["oracle"]["reward_error"].diagnostics["chance"]
    assert chance > 0.0  # the windows hold rewards: the chance level is not trivially zero
    assert not table["static"]["reward_error"].valid
    assert "predicts no reward" in " ".join(table["static"]["reward_error"].skip_breakdown), table["static"]
    if family == "orby":  # the pellet is the agent's doing: the game of its own random actions is at chance
        assert value(table, "random_actions", "reward_error") == pytest.approx(chance, rel=0.5)
