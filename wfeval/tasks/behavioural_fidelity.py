"""``task=behavioural_fidelity``: a frozen policy acts on the model's predicted observations while its
actions run in the true simulator (``protocol=behavioural_fidelity``; WorldModelGym's behavioural fidelity).

A family serves it by offering :class:`BehaviouralFidelityFamily` (gridworld and orby: goal-reaching
episodes; pusht: a reach episode per goal sample); a benchmark without it is refused before any generation (:data:`NEED`). Its names are its
own (``fidelity_*``), apart from ``task=policy_evaluation``'s: the policies here must read their
observations, where a policy evaluator's may not.
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol, runtime_checkable

from wfeval.api import GenerationRequest
from wfeval.tasks.family import FamilyNeed


@runtime_checkable
class BehaviouralFidelityFamily(Protocol):
    """What a family offers for ``task=behavioural_fidelity``:

    - ``fidelity_policies()``: name → policy (``act(frame, context) -> action``, pure), best first; each
      must read the frame it is given (a policy blind to its observations has nothing to lose);
    - ``fidelity_environment(request)``: the true simulator at the sample's start; ``step(action)``
      returns ``(frame, reward, done)``;
    - ``fidelity_settings(request)``: ``{"max_steps": …, "discount": …}`` of the sample's episodes.

    Optionally ``fidelity_reward(request, previous, frame)``: ``(reward, done)`` read off two frames,
    which scores the reward a pixel model without its own ``reward`` implies (reward prediction)."""

    def fidelity_policies(self) -> Mapping[str, Any]: ...

    def fidelity_environment(self, request: GenerationRequest) -> Any: ...

    def fidelity_settings(self, request: GenerationRequest) -> Mapping[str, Any]: ...


#: what ``protocol=behavioural_fidelity`` needs of a benchmark
NEED = FamilyNeed(
    task="behavioural_fidelity", interfaces=(BehaviouralFidelityFamily,),
    refusal="protocol=behavioural_fidelity: benchmark {name!r} declares no scripted policies and true episode "
            "(wfeval.tasks.behavioural_fidelity.BehaviouralFidelityFamily); it runs on gridworld, orby and pusht")
