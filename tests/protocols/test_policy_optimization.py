"""task=policy_optimization against closed forms and simulator truth: the learner solves a chain it can be
checked on by hand, the lift is the ratio of its anchors, the oracle's learner is the simulator-trained
one bit for bit, and a benchmark without a learner's interface is refused before any generation."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import compose
from tests.protocols.test_step_interface import _requests
from wfeval.config.errors import ConfigError
from wfeval.functional.optimization import bootstrap_lift, optimization_lift
from wfeval.pipeline import build
from wfeval.protocols import learner as L
from wfeval.protocols.policy_optimization import PolicyOptimizationDriver
from wfeval.tasks import policy_optimization

TINY = ["task=policy_optimization", "task.data.optimization.train_episodes=60", "task.data.optimization.seeds=1",
        "task.data.optimization.eval_episodes=2"]


class Chain:
    """States 0..4 on a line, start 0; action 1 moves right, 0 stays; reward 1 and done on reaching 4."""

    def begin(self):
        self.x = 0
        return self.x

    def advance(self, action):
        self.x = min(self.x + int(action), 4)
        return self.x, float(self.x == 4), self.x == 4


def test_the_learner_solves_a_chain_and_its_values_are_the_discounted_distance():
    q = L.TabularQ(2, alpha=0.5, discount=0.9, epsilon=0.3, rng=np.random.default_rng(0))
    spent = L.train(Chain(), q, lambda previous, x: x, episodes=300, max_steps=10)
    assert 0 < spent <= 3000
    for x in range(4):  # Q(x, right) -> 0.9 ** (3 - x): one reward, three - x steps of discount away
        assert q.q[x][1] == pytest.approx(0.9 ** (3 - x), abs=1e-3) and q.q[x][1] > q.q[x][0]
    out = L.rollout(Chain(), q.greedy(np.random.default_rng(1)), lambda previous, x: x, max_steps=10, discount=0.9)
    assert out["actions"] == [1, 1, 1, 1] and out["return"] == pytest.approx(0.9 ** 3)
    blank = L.TabularQ(2, 0.5, 0.9, 0.3, np.random.default_rng(0))  # learnt nothing: acts at random
    acts = blank.greedy(np.random.default_rng(2))
    assert {acts(0, t) for t in range(50)} == {0, 1}


class Line:
    """A family environment whose world actions are positions: ``step(x)`` goes to x; reward 1 at 3."""

    def reset(self, episode, seed, warmup):
        self.x = 0
        return self.x

    def step(self, action):
        self.x = action
        return self.x


def test_a_family_command_makes_the_learners_action_the_worlds_from_the_frame_it_sees():
    reward = lambda request, previous, x: (float(x == 3), x == 3)  # noqa: E731
    world = L.SimWorld(Line(), None, reward, command=lambda x, action: x + action)  # a move relative to x
    out = L.rollout(world, lambda key, step: 1, lambda previous, x: x, max_steps=5, discount=0.5)
    assert out["actions"] == [1, 2, 3] and out["frames"] == [0, 1, 2, 3]  # the commands the world ran
    assert out["return"] == pytest.approx(0.25)
    plain = L.rollout(L.SimWorld(Line(), None, reward), lambda key, step: 3, lambda p, x: x, 5, 0.5)
    assert plain["actions"] == [3] and plain["return"] == 1.0  # no command: the id is the world's action


def test_the_lift_is_the_ratio_of_its_anchors():
    sim, rnd = [1.0, 0.8, 0.6], [0.2, 0.0, 0.1]
    assert optimization_lift(sim, sim, rnd) == 1.0 and optimization_lift(rnd, sim, rnd) == 0.0
    assert optimization_lift([0.45, 0.35, 0.35], sim, rnd) == pytest.approx((0.3833333 - 0.1) / (0.8 - 0.1))
    assert optimization_lift([1.0], [0.5], [0.5]) is None  # a ceiling not above the floor: undefined
    assert bootstrap_lift(sim, sim, rnd, n_resamples=200) == (1.0, 1.0)
    low, high = bootstrap_lift([0.9, 0.1, 0.5, 0.3], [1.0, 0.8, 0.9, 0.7], [0.1, 0.0, 0.2, 0.1], n_resamples=500)
    assert low < optimization_lift([0.9, 0.1, 0.5, 0.3], [1.0, 0.8, 0.9, 0.7], [0.1, 0.0, 0.2, 0.1]) < high


def test_the_oracle_trains_the_simulator_learner_exactly_and_the_static_model_learns_nothing(tmp_path):
    requests = _requests(tmp_path, *TINY, "benchmark.num_samples=2")
    bench = build.build_benchmark(compose(TINY))
    data = build.build_task(compose(TINY)).to_dict()["data"]
    for name in ("oracle", "static"):
        model = build.build_model(compose([f"model={name}"])).model
        for request in requests:
            out = PolicyOptimizationDriver(model, bench, data).run_one(request)
            info = out.metadata["policy_optimization"]
            returns = info["returns"]
            assert info["budget_steps"]["simulator"] > 60 and np.array(returns["simulator"]).shape == (1, 2)
            if name == "oracle":
                assert returns["model"] == returns["simulator"] and info["budget_steps"]["model"] == \
                    info["budget_steps"]["simulator"]
                assert out.metadata["plan_audit"]["chosen_gap"] == out.metadata["plan_audit"]["random_gap"] == 0.0
            else:  # frozen frames: never a reward inside it, so its policy is the random one's kind
                assert info["reward_source"] == "frames" and out.metadata["plan_audit"]["chosen_gap"] <= 0.0
            video = out.outputs["generated_video"]
            assert video.dtype == np.uint8 and len(video) == len(info["actions"]) + 1


def test_settings_take_the_family_defaults_and_name_a_bad_key():
    family = {"max_steps": 16, "discount": 0.95, "max_return": 1.0, "n_actions": 5, "train_episodes": 200,
              "eval_episodes": 4, "warmup": 2}
    got = policy_optimization.settings({"optimization": {"train_episodes": None, "seeds": 3}}, family)
    assert (got["train_episodes"], got["seeds"], got["epsilon"]) == (200, 3, 0.2)
    with pytest.raises(ConfigError, match=r"task.data.optimization: unknown key\(s\) \['episodes'\]"):
        policy_optimization.settings({"optimization": {"episodes": 3}}, family)
    with pytest.raises(ConfigError, match="task.data.optimization.epsilon must be in"):
        policy_optimization.settings({"optimization": {"epsilon": 2}}, family)


def test_a_benchmark_without_a_learners_interface_is_refused():
    class NoLearner:
        spec = type("Spec", (), {"name": "plain"})()

        def simulate(self, request, actions):
            return None, {}

    protocol = build.build_protocol(compose(["task=policy_optimization"]))
    with pytest.raises(ConfigError, match="benchmark 'plain' declares no observation, reward and true simulator"):
        policy_optimization.NEED.check(NoLearner())
    assert protocol.name == "policy_optimization"
