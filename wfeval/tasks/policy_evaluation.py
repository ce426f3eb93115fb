"""``task=policy_evaluation``: the world model as a policy evaluator (``protocol=policy_evaluation``).

A family serves it by offering :class:`PolicyEvaluationFamily` in its own package: gridworld (goal
reaching), and every recorded family — the Atari games, Crafter, Memory Maze, orby, pusht — through
the shared :mod:`wfeval.benchmarks.recorded.policy_evaluation` (tracking the recorded demonstration); a
benchmark without it is refused before any generation (:data:`NEED`).
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

from wfeval.api import GenerationRequest
from wfeval.tasks.family import FamilyNeed


@runtime_checkable
class PolicyEvaluationFamily(Protocol):
    """What a family offers for ``task=policy_evaluation`` (``protocol=policy_evaluation`` refuses a
    benchmark without it).

    - ``scripted_policies()``: name → policy (``act(frame, context) -> action``, a pure function of its
      arguments: :mod:`wfeval.protocols.policies`), a set of different skill, best first;
    - ``policy_environment(request)``: the true simulator at the sample's start; its ``step(action)``
      returns ``(frame, reward, done)`` (the simulator's own reward: the truth);
    - ``frame_reward(request, previous, frame, step)``: ``(reward, done)`` read off two consecutive
      frames, ``frame`` the episode's ``step``-th (1 = after the first action) — how the benchmark
      scores a rollout inside a world model that gives no reward of its own;
    - ``policy_settings(request)``: ``{"max_steps": …, "discount": …}`` of the sample's episodes;
    - ``simulate(request, actions)``: the true video of given actions (the reference of the first
      policy's in-model actions, so the reference metrics apply);
    - optionally ``objective_from_frames`` (a bool, default False): True when ``frame_reward`` is the
      objective even for a model that reports a reward of its own (a different quantity: the recorded
      families track the demonstration, their games' score is not it); read by
      :func:`wfeval.tasks.family.objective_from_frames`."""

    def scripted_policies(self) -> Mapping[str, Any]: ...

    def policy_environment(self, request: GenerationRequest) -> Any: ...

    def frame_reward(self, request: GenerationRequest, previous: Any, frame: Any, step: int) -> tuple[float, bool]: ...

    def policy_settings(self, request: GenerationRequest) -> Mapping[str, Any]: ...

    def simulate(self, request: GenerationRequest, actions: Sequence[Any]) -> tuple[Any, Mapping[str, Any]]: ...


#: what ``protocol=policy_evaluation`` needs of a benchmark
NEED = FamilyNeed(
    task="policy_evaluation", interfaces=(PolicyEvaluationFamily,),
    refusal="protocol=policy_evaluation: benchmark {name!r} declares no scripted policies, true "
            "episode and reward (wfeval.tasks.policy_evaluation.PolicyEvaluationFamily); it runs on "
            "gridworld and the simulated recorded families (atari_*, crafter, memory_maze*, orby, pusht)")
