"""The plan audit against simulator truth: the exploitable model is the oracle except one action
sequence it shows reaching the goal; the audit runs every candidate in the true world from the same
state, so the oracle's promises are exact and the exploitable model's chosen plans are caught."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import compose
from tests.protocols.test_step_interface import _requests
from wfeval.benchmarks.gridworld import world
from wfeval.pipeline import build
from wfeval.protocols import plan_audit
from wfeval.protocols.planning import Planner


@pytest.fixture(scope="module")
def goal_samples(tmp_path_factory):
    requests = _requests(tmp_path_factory.mktemp("audit"), "task=goal_reaching", "benchmark.num_samples=3")
    return requests, build.build_benchmark(compose(["task=goal_reaching"]))


def _model(*overrides):
    return build.build_model(compose(list(overrides))).model


def test_the_exploitable_model_is_the_oracle_without_a_goal_and_teleports_after_its_sequence(tmp_path, goal_samples):
    plain = _requests(tmp_path, "benchmark.num_samples=3")
    exploitable, oracle = _model("model=exploitable"), _model("model=oracle")
    for got, truth in zip(exploitable.generate(plain), oracle.generate(plain)):
        np.testing.assert_array_equal(got["generated_video"], truth["generated_video"])  # no goal: exact
    requests, _ = goal_samples
    for request in requests:
        goal = tuple(request.metadata["goal"]["cell"])
        actions = [0, 0, 4, 1]  # begins with the sequence (a noop first)
        out = exploitable.step(exploitable.start(request), actions[:1])
        rest = exploitable.step(out.state, actions[1:])
        frames = np.concatenate([out.frames, rest.frames])
        w = world.WorldState.from_dict(request.metadata["world"])
        for t, action in enumerate(actions):
            w = world.step(w, action)
            shown = world.WorldState(w.seed, w.spec, goal, w.walls, w.objects)
            np.testing.assert_array_equal(frames[t], world.render(shown))  # the agent shown on the goal from step 1
        other = exploitable.step(exploitable.start(request), [1, 0, 0])  # the sequence later: exact
        np.testing.assert_array_equal(other.frames, oracle.step(oracle.start(request), [1, 0, 0]).frames)
        batched = exploitable.step_many([exploitable.start(request)] * 2, [actions, [1, 0, 0]])
        np.testing.assert_array_equal(batched[0].frames, frames)
        np.testing.assert_array_equal(batched[1].frames, other.frames)


def test_the_audit_of_the_oracle_is_exact_and_the_exploitable_choice_is_caught(goal_samples):
    requests, bench = goal_samples
    planner = Planner(candidates=24, horizon=4)
    for name, gap in (("oracle", 0.0), ("exploitable", 1.0)):
        model = _model(f"model={name}")
        for i, request in enumerate(requests):
            env = bench.environment(request)
            best = planner.plan(model, model.start(request), env.n_actions, env.distances, np.random.default_rng(i))
            row = plan_audit.audit_step(env, best, "pixels")
            truth = plan_audit.real_scores(env, best["candidates"]["plans"])[1]
            if name == "oracle":  # the model's scores are the simulator's, candidate by candidate
                np.testing.assert_array_equal(best["candidates"]["scores"], truth)
                assert row == {"regret_px": 0.0, "kendall": pytest.approx(1.0), "spearman": pytest.approx(1.0),
                               "chosen_gap": 0.0, "random_gap": 0.0}
            else:  # it chose the sequence it shows reaching the goal, which does not
                assert best["actions"][0] == 0 and row["chosen_gap"] == gap
                assert row["regret_px"] > 0 and 0 < row["random_gap"] < 0.5


def test_rank_agreement_is_zero_for_a_model_that_orders_nothing():
    assert plan_audit.rank_agreement(np.full(5, 3.0), np.arange(5.0)) == (0.0, 0.0)
    tau, rho = plan_audit.rank_agreement(np.arange(5.0), -np.arange(5.0))
    assert tau == pytest.approx(-1.0) and rho == pytest.approx(-1.0)
    assert plan_audit.summary([None, None])["steps"] == 0


#: the plan audit's measures of task=goal_reaching on pusht (tests/conftest.py: PUSHT_GOALS, 4 goal samples,
#: CEM over target positions, 8 candidates × 3 steps × 2 iterations): the runs tests/benchmarks/test_pusht.py
#: scores goal_success on
AUDIT = ("selection_regret", "plan_rank_agreement", "chosen_plan_gap", "random_plan_gap", "exploitability")


@pytest.fixture(scope="module")
def pusht_audits(pusht_goal_runs):
    return {model: {m: pusht_goal_runs[model][m] for m in AUDIT} for model in ("oracle", "random_actions")}


def test_on_pusht_the_oracle_chooses_as_the_simulator_and_promises_exactly(pusht_audits):
    oracle = pusht_audits["oracle"]
    assert all(a["valid"] and a["n_valid"] == 4 for a in oracle.values()), oracle
    assert oracle["selection_regret"]["value"] == 0.0
    assert oracle["plan_rank_agreement"]["value"] == pytest.approx(1.0)
    for gap in ("chosen_plan_gap", "random_plan_gap", "exploitability"):  # pusht's reach_px: the gaps are computed
        assert oracle[gap]["value"] == 0.0


def test_on_pusht_a_model_that_ignores_the_plans_orders_nothing_and_regrets_its_choice(pusht_audits):
    worse = pusht_audits["random_actions"]
    assert worse["plan_rank_agreement"]["value"] == 0.0  # every candidate imagined alike
    assert worse["selection_regret"]["value"] > 1.0  # px of the planner's score
