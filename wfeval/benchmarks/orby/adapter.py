"""The orby benchmark (``benchmark=orby``): tiny-jepa's OrbyWorld recorded offline, with its exact state."""

from __future__ import annotations

from typing import Any, Mapping

from wfeval.api import EvaluationProtocolSpec, GenerationRequest, WorldTaskConfig
from wfeval.benchmarks.orby import simulator
from wfeval.benchmarks.recorded.adapter import RecordedBenchmark


class OrbyBenchmark(RecordedBenchmark):
    """See :class:`~wfeval.benchmarks.recorded.adapter.RecordedBenchmark` for the sample layout;
    ``task=probing`` reads the exact state (:data:`simulator.STATE_VARIABLES`) of every frame;
    ``task=goal_reaching`` plans in a latent model's space and acts in the true world (:mod:`.goals`)."""

    family = "orby"
    goal_spaces = ("latent",)  # task=goal_reaching: no pixel locator tells the agent from the pellet
    simulator_module = simulator
    option_schemas = {"env": simulator.DEFAULTS}

    def __init__(self, env: Mapping[str, Any] | None = None, **options: Any):
        super().__init__(env=simulator.check_config(env or {}), **options)

    def state_variables(self) -> tuple:
        return simulator.STATE_VARIABLES

    def materialize(self, record: Any, *, store: Any, task: WorldTaskConfig,
                    protocol: EvaluationProtocolSpec) -> GenerationRequest:
        request = super().materialize(record, store=store, task=task, protocol=protocol)
        goal = self.task_goal(task, protocol)  # task=goal_reaching: a goal position from the window's start
        if not goal:
            return request
        from wfeval.benchmarks.orby import goals

        return goals.goal_request(request, goal, store)

    def environment(self, request: GenerationRequest) -> Any:
        """The true world of a goal-reaching sample, for a planner to act in (protocol=planning)."""
        if "goal" not in request.metadata:
            raise ValueError(f"sample {request.sample_id!r} has no goal: planning runs with task=goal_reaching")
        from wfeval.benchmarks.orby import goals

        return goals.OrbyGoalEnvironment(request)

    # -- task=behavioural_fidelity (wfeval.tasks.behavioural_fidelity): the goal samples, a frame-reading policy

    def fidelity_policies(self) -> dict[str, Any]:
        from wfeval.benchmarks.orby import behaviour

        return behaviour.policies()

    def fidelity_environment(self, request: GenerationRequest) -> Any:
        from wfeval.benchmarks.orby import behaviour

        return behaviour.Episode(request)

    def fidelity_settings(self, request: GenerationRequest) -> Mapping[str, Any]:
        from wfeval.benchmarks.orby import behaviour

        return behaviour.settings(request)
