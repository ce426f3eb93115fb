"""The planner imagines all candidate plans in one step_many call when the model has it (the same
choice as stepping them one by one), and CEM finds the way to a goal the oracle can see."""

from __future__ import annotations

import numpy as np

from tests.conftest import compose
from tests.protocols.test_step_interface import _requests
from wfeval.models.protocol import StepOutput
from wfeval.pipeline import build
from wfeval.protocols.planning import Planner


class Batched:
    """The oracle plus a step_many that counts its calls."""

    def __init__(self, oracle):
        self.oracle, self.batched_calls, self.states = oracle, 0, 0

    def start(self, request):
        return self.oracle.start(request)

    def step(self, state, actions):
        return self.oracle.step(state, actions)

    def step_many(self, states, actions):
        self.batched_calls += 1
        self.states += len(states)
        return [self.oracle.step(s, a) for s, a in zip(states, actions)]


def _setup(tmp_path):
    requests = _requests(tmp_path, "task=goal_reaching", "benchmark.num_samples=2")
    bench = build.build_benchmark(compose(["task=goal_reaching"]))
    oracle = build.build_model(compose(["model=oracle"])).model
    return requests, bench, oracle


def test_candidates_are_imagined_in_one_step_many_call_with_the_same_choice(tmp_path):
    requests, bench, oracle = _setup(tmp_path)
    env = bench.environment(requests[0])
    planner = Planner(candidates=16, horizon=4)
    batched = Batched(oracle)
    one = planner.plan(batched, batched.start(requests[0]), env.n_actions, env.distances, np.random.default_rng(0))
    assert (batched.batched_calls, batched.states) == (1, 16)
    plain = planner.plan(oracle, oracle.start(requests[0]), env.n_actions, env.distances, np.random.default_rng(0))
    assert one["actions"] == plain["actions"] and one["score"] == plain["score"] and one["imagined"] == 16 * 4
    np.testing.assert_array_equal(one["first_frame"], oracle.step(oracle.start(requests[0]), one["actions"][:1]).frames[0])


def test_cem_with_the_oracle_moves_towards_the_goal(tmp_path):
    requests, bench, oracle = _setup(tmp_path)
    for request in requests:
        env = bench.environment(request)
        start = env.distance
        best = Planner(method="cem", candidates=32, horizon=6, iterations=3, elites=6).plan(
            oracle, oracle.start(request), env.n_actions, env.distances, np.random.default_rng(1))
        env.step(best["actions"][0])
        assert best["imagined"] == 3 * 32 * 6
        assert env.distance < start  # the first move of the best imagined plan gets closer
        assert isinstance(oracle.step(oracle.start(request), [0]), StepOutput)
