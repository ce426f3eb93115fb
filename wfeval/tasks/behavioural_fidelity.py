"""``task=behavioural_fidelity``: a frozen policy acts on the model's predicted observations while its
actions run in the true simulator (``protocol=behavioural_fidelity``; WorldModelGym's behavioural fidelity).

A family serves it by offering :class:`BehaviouralFidelityFamily` (a subset of what
``task=policy_evaluation`` asks: any family with scripted policies, a true episode and its settings
serves both); a benchmark without it is refused before any generation (:data:`NEED`).
"""

from __future__ import annotations

from typing import Any, Mapping, Protocol, runtime_checkable

from wfeval.api import GenerationRequest
from wfeval.tasks.family import FamilyNeed


@runtime_checkable
class BehaviouralFidelityFamily(Protocol):
    """What a family offers for ``task=behavioural_fidelity``:

    - ``scripted_policies()``: name → policy (``act(frame, context) -> action``, pure), best first; each
      must read the frame it is given (a policy blind to its observations has nothing to lose);
    - ``policy_environment(request)``: the true simulator at the sample's start; ``step(action)``
      returns ``(frame, reward, done)``;
    - ``policy_settings(request)``: ``{"max_steps": …, "discount": …}`` of the sample's episodes.

    Optionally ``frame_reward(request, previous, frame)``: the reward read off two frames, which scores
    the reward a pixel model without its own ``reward`` implies (the reward-prediction measures)."""

    def scripted_policies(self) -> Mapping[str, Any]: ...

    def policy_environment(self, request: GenerationRequest) -> Any: ...

    def policy_settings(self, request: GenerationRequest) -> Mapping[str, Any]: ...


#: what ``protocol=behavioural_fidelity`` needs of a benchmark
NEED = FamilyNeed(
    task="behavioural_fidelity", interfaces=(BehaviouralFidelityFamily,),
    refusal="protocol=behavioural_fidelity: benchmark {name!r} declares no scripted policies and true episode "
            "(wfeval.tasks.behavioural_fidelity.BehaviouralFidelityFamily); use benchmark=gridworld")
