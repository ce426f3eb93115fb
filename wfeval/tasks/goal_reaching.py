"""``task=goal_reaching``: reach a goal by planning inside the world model and acting in the true
simulator (``protocol=planning``).

A family serves it by offering :class:`GoalReachingFamily` in its own package (gridworld, orby):
each sample's request carries its goal (``task.data.goal``: ``min_distance``, ``max_distance``,
``max_steps``, read by the family when it builds the sample) and ``environment(request)`` is the true
world of that sample. A benchmark without it is refused before any generation (:data:`NEED`).
"""

from __future__ import annotations

from typing import Any, Protocol, Sequence, runtime_checkable

from wfeval.api import GenerationRequest
from wfeval.tasks.family import FamilyNeed


@runtime_checkable
class GoalReachingFamily(Protocol):
    """What a family offers for ``task=goal_reaching``:

    - ``environment(request)``: the true world of a goal sample, which the planner steps
      (``step(action)``; ``at_goal``, ``distance``, ``max_steps``, ``optimal_steps``, ``goal_cell``,
      ``n_actions``; for pixel planning ``distances`` and ``request(store)``, the current state as a
      request to re-ground the model; for latent planning ``frame()`` and ``goal_frame()``: the
      gridworld's ``GoalEnvironment``, orby's ``OrbyGoalEnvironment``);
    - ``simulate(request, actions)``: the true video of the executed actions (the reference);
    - optionally ``goal_spaces``: the planning spaces it supports (``pixels``: a locator scores
      imagined frames; ``latent``: a latent model's distance to the encoded goal), ``("pixels",)``
      when absent."""

    def environment(self, request: GenerationRequest) -> Any: ...

    def simulate(self, request: GenerationRequest, actions: Sequence[Any]) -> tuple[Any, Any]: ...


def goal_spaces(benchmark: Any) -> tuple[str, ...]:
    """The planning spaces a goal-reaching family supports (``("pixels",)`` unless it says otherwise)."""
    return tuple(getattr(benchmark, "goal_spaces", ("pixels",)))


#: what ``protocol=planning`` needs of a benchmark, and the measures its evidence rests on (success in
#: the true world, read off the simulator; the pixel measures of a model that decodes are extra)
NEED = FamilyNeed(
    task="goal_reaching", interfaces=(GoalReachingFamily,), evidence=("goal_success", "spl"),
    refusal="protocol=planning: benchmark {name!r} offers no goal environment "
            "(task=goal_reaching runs on gridworld and orby)")
