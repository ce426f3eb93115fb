"""Each task says in its own module (``wfeval/tasks/``) what it needs of a benchmark family; the
built-in families offer the task interfaces the refusals say they do, and every protocol of a task
refuses a benchmark without its interface before any generation, with the message its task declares."""

from __future__ import annotations

import pytest

from tests.conftest import compose
from wfeval.config.errors import ConfigError
from wfeval.pipeline import build
from wfeval.protocols.behavioural_fidelity import BehaviouralFidelity
from wfeval.protocols.memory import Memory
from wfeval.protocols.planning import Planning
from wfeval.protocols.policy_evaluation import PolicyEvaluation
from wfeval.protocols.policy_optimization import PolicyOptimization
from wfeval.protocols.probing import Probing
from wfeval.tasks import behavioural_fidelity, goal_reaching, memory, policy_evaluation, policy_optimization, probing

NEEDS = (memory.NEED, policy_evaluation.NEED, probing.NEED, goal_reaching.NEED, policy_optimization.NEED,
         behavioural_fidelity.NEED)
#: built-in benchmark -> the tasks whose interface its family offers (as the refusals list them)
SERVES = {
    "gridworld": {"memory", "policy_evaluation", "probing", "goal_reaching", "policy_optimization",
                  "behavioural_fidelity"},
    "memory_maze": {"memory", "policy_evaluation"},
    "orby": {"probing", "goal_reaching", "policy_evaluation", "behavioural_fidelity"},
    "pusht": {"probing", "goal_reaching", "policy_evaluation", "behavioural_fidelity", "policy_optimization"},
    "atari_pong": {"probing", "policy_evaluation", "policy_optimization"},
    "crafter": {"policy_evaluation"},
    "folder": set(),
}


def _benchmark(name: str):
    if name == "pusht":
        pytest.importorskip("gym_pusht")
    extra = ["benchmark.dataset_root=examples/datasets/gridworld_tiny"] if name == "folder" else []
    return build.build_benchmark(compose([f"benchmark={name}", *extra]))


@pytest.mark.parametrize("name", sorted(SERVES))
def test_the_built_in_families_offer_the_task_interfaces_their_refusals_name(name):
    bench = _benchmark(name)
    assert {need.task for need in NEEDS if need.served_by(bench)} == SERVES[name]


def test_each_task_protocol_names_its_tasks_need():
    assert Memory.family_need is memory.NEED and PolicyEvaluation.family_need is policy_evaluation.NEED
    assert Probing.family_need is probing.NEED and Planning.family_need is goal_reaching.NEED
    assert PolicyOptimization.family_need is policy_optimization.NEED
    assert BehaviouralFidelity.family_need is behavioural_fidelity.NEED


class EveryModelInterface:
    """A model with the generate, step and latent interfaces: only the benchmark can be refused."""

    name = "every_interface"

    def generate(self, requests): return []

    def start(self, request): return None

    def step(self, state, actions): return None

    def encode(self, frames): return frames

    def predict(self, z, actions): return z


@pytest.mark.parametrize("protocol,benchmark,said", [
    (Memory(), "folder", "can neither plan revisits from its exact state (revisit_plan / simulate / static_masks: "
                         "wfeval.tasks.memory.RevisitPlanner) nor find them in a recorded state "
                         "(wfeval.tasks.memory.RevisitFinder)"),
    (PolicyEvaluation(), "folder", "declares no scripted policies, true episode and reward "
                                   "(wfeval.tasks.policy_evaluation.PolicyEvaluationFamily); it runs on gridworld and "
                                   "the simulated recorded families (atari_*, crafter, memory_maze*, orby, pusht)"),
    (Probing(), "folder", "declares no state variables (task=probing runs on gridworld, orby, atari_pong, "
                          "atari_breakout and atari_boxing, and on lerobot, hdf5 and minari datasets that record a "
                          "state)"),
    (Planning(space="pixels"), "atari_pong", "offers no goal environment (task=goal_reaching runs on gridworld, orby and pusht)"),
    (BehaviouralFidelity(), "atari_pong", "declares no scripted policies and true episode "
                                          "(wfeval.tasks.behavioural_fidelity.BehaviouralFidelityFamily); it runs on "
                                          "gridworld, orby and pusht"),
    (PolicyOptimization(), "atari_breakout", "plays 'breakout', which has no reward for a learner here "
                                             "(task=policy_optimization runs on gridworld, atari_pong and pusht)"),
])
def test_a_protocol_refuses_a_benchmark_without_its_tasks_interface(protocol, benchmark, said):
    bench = _benchmark(benchmark)
    with pytest.raises(ConfigError) as refused:
        protocol.check(EveryModelInterface(), bench)
    assert f"benchmark {bench.spec.name!r} {said}" in str(refused.value)
    served = _benchmark("gridworld")
    protocol.check(EveryModelInterface(), served)  # the same protocol and model on a family that offers it
