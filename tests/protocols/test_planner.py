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


class FailsOn:
    """The oracle, but imagining from the state of one sample raises (an imagination that fails)."""

    def __init__(self, oracle, bad_world):
        self.oracle, self.bad_world, self.name = oracle, bad_world, "fails_on"

    def start(self, request):
        return self.oracle.start(request)

    def step(self, state, actions):
        if state.world == self.bad_world:
            raise RuntimeError("cannot imagine this one")
        return self.oracle.step(state, actions)


def test_plan_many_gives_each_sample_the_plan_it_gets_alone_in_one_call(tmp_path):
    requests = _requests(tmp_path, "task=goal_reaching", "benchmark.num_samples=3")
    bench = build.build_benchmark(compose(["task=goal_reaching"]))
    oracle = build.build_model(compose(["model=oracle"])).model
    envs = [bench.environment(r) for r in requests]
    for planner in (Planner(candidates=16, horizon=4), Planner(method="cem", candidates=12, horizon=5, elites=3)):
        batched = Batched(oracle)
        together = planner.plan_many(batched, [batched.start(r) for r in requests], [e.n_actions for e in envs],
                                     [e.distances for e in envs], [np.random.default_rng(i) for i in range(3)],
                                     [None, 3, None])
        assert batched.batched_calls == (planner.iterations if planner.method == "cem" else 1)
        for i, (request, env) in enumerate(zip(requests, envs)):
            alone = planner.plan(oracle, oracle.start(request), env.n_actions, env.distances,
                                 np.random.default_rng(i), horizon=[None, 3, None][i])
            assert together[i]["actions"] == alone["actions"] and together[i]["score"] == alone["score"]
            assert together[i]["imagined"] == alone["imagined"]
            np.testing.assert_array_equal(together[i]["first_frame"], alone["first_frame"])
    failing = FailsOn(oracle, oracle.start(requests[1]).world)
    out = Planner(candidates=8, horizon=3).plan_many(
        failing, [failing.start(r) for r in requests], [5] * 3, [e.distances for e in envs],
        [np.random.default_rng(i) for i in range(3)], [None] * 3)
    assert isinstance(out[1], RuntimeError) and "cannot imagine" in str(out[1])
    assert [len(out[i]["actions"]) for i in (0, 2)] == [3, 3]  # the others planned


def test_the_planning_driver_in_lockstep_gives_each_sample_its_own_episode(tmp_path):
    from wfeval.protocols.planning import Planning
    from wfeval.storage.artifacts import ArtifactStore

    requests = _requests(tmp_path, "task=goal_reaching", "benchmark.num_samples=4")
    bench = build.build_benchmark(compose(["task=goal_reaching"]))
    oracle = build.build_model(compose(["model=oracle"])).model
    driver = Planning({"candidates": 16, "horizon": 4}).drive(oracle, bench, ArtifactStore(tmp_path / "s"), None)
    together = driver.generate(requests)
    for request, out in zip(requests, together):
        alone = driver.generate([request])[0]
        assert out.metadata["planning"] == alone.metadata["planning"]
        np.testing.assert_array_equal(out.outputs["generated_video"], alone.outputs["generated_video"])
        assert [r["actions"] for r in out.metadata["steps"]] == [r["actions"] for r in alone.metadata["steps"]]
        assert {r["batch"] for r in alone.metadata["steps"]} == {1}
    assert max(r["batch"] for r in together[0].metadata["steps"]) == 4
    failing = Planning({"candidates": 8, "horizon": 3}).drive(FailsOn(oracle, oracle.start(requests[2]).world),
                                                             bench, ArtifactStore(tmp_path / "s"), None)
    outcomes = failing.generate(requests)
    assert isinstance(outcomes[2], RuntimeError)
    assert all(o.metadata["planning"]["steps"] >= 1 for i, o in enumerate(outcomes) if i != 2)
