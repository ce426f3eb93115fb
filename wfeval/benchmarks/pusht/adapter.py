"""The Push-T benchmark (``benchmark=pusht``): gym-pusht recorded offline, continuous actions, exact state."""

from __future__ import annotations

from typing import Any, Mapping

from wfeval.api import EvaluationProtocolSpec, GenerationRequest, WorldTaskConfig
from wfeval.benchmarks.pusht import simulator
from wfeval.benchmarks.pusht.policy import PushTPolicy
from wfeval.benchmarks.recorded.adapter import RecordedBenchmark


class PushTBenchmark(RecordedBenchmark):
    """See :class:`~wfeval.benchmarks.recorded.adapter.RecordedBenchmark` for the sample layout.

    An action is the agent's target position, two float32 px in [0, 512] (the declared
    ``BenchmarkSpec.action_space``, handed to models as ``controls["action_space"]``);
    ``task=probing`` reads the exact state (:data:`simulator.STATE_VARIABLES`) of every frame;
    ``task=goal_reaching`` plans towards the block's pose some recorded steps later, in pixels or a
    latent model's space, and acts in the true world (:mod:`.goals`); ``task=policy_evaluation`` ranks
    pushers of known skill at tracking the recorded demonstration (:meth:`scripted_policies`);
    ``task=behavioural_fidelity`` walks the agent to a place on frames the policy reads (:mod:`.reach`).
    ``env.observation_size`` pins the rendered frame's side (96 px, as gym-pusht and LeRobot's
    Push-T data render it).
    """

    family = "pusht"
    goal_spaces = ("pixels", "latent")  # task=goal_reaching: the colour locator's cost, or a latent model's space
    simulator_module = simulator
    policy_class = PushTPolicy
    option_schemas = {"env": simulator.DEFAULTS, "policy": PushTPolicy}

    def __init__(self, env: Mapping[str, Any] | None = None, **options: Any):
        super().__init__(env=simulator.check_config(env or {}), **options)

    def state_variables(self) -> tuple:
        return simulator.STATE_VARIABLES

    def materialize(self, record: Any, *, store: Any, task: WorldTaskConfig,
                    protocol: EvaluationProtocolSpec) -> GenerationRequest:
        request = super().materialize(record, store=store, task=task, protocol=protocol)
        goal = self.task_goal(task, protocol)  # task=goal_reaching: the block's pose some recorded steps later
        if not goal:
            return request
        from wfeval.benchmarks.pusht import goals

        return goals.goal_request(request, goal, store, self.env["observation_size"])

    def scripted_policies(self) -> dict[str, Any]:
        """``task=policy_evaluation``'s pushers of known skill at tracking the demonstration, best first: the
        demonstration's targets, the same with Gaussian noise of 8 px and 32 px (σ, each coordinate of the
        512 px arena; clipped into it), uniform targets. Following with a probability (the games' set)
        separates less on Push-T: a random target is a lurch the next demonstrated one undoes (docs/pusht.md)."""
        from wfeval.benchmarks.recorded.policy_evaluation import FollowDemonstration, NoisyDemonstration

        return {p.name: p for p in (FollowDemonstration("demonstrator", 1.0), NoisyDemonstration("noise_8px", 8.0),
                                    NoisyDemonstration("noise_32px", 32.0), FollowDemonstration("random", 0.0))}

    def environment(self, request: GenerationRequest) -> Any:
        """The true world of a goal-reaching sample, for a planner to act in (protocol=planning)."""
        if "goal" not in request.metadata:
            raise ValueError(f"sample {request.sample_id!r} has no goal: planning runs with task=goal_reaching")
        from wfeval.benchmarks.pusht import goals

        return goals.PushTGoalEnvironment(request)

    # -- task=behavioural_fidelity (wfeval.tasks.behavioural_fidelity): a reach episode per goal sample (.reach)

    def fidelity_policies(self) -> dict[str, Any]:
        from wfeval.benchmarks.pusht import reach

        return reach.policies()

    def fidelity_environment(self, request: GenerationRequest) -> Any:
        from wfeval.benchmarks.pusht import reach

        return reach.Episode(request)

    def fidelity_settings(self, request: GenerationRequest) -> Mapping[str, Any]:
        from wfeval.benchmarks.pusht import reach

        return reach.settings(request)

    def fidelity_reward(self, request: GenerationRequest, previous: Any, frame: Any) -> tuple[float, bool]:
        from wfeval.benchmarks.pusht import reach

        return reach.frame_reward(request, previous, frame)

    # -- task=policy_optimization (wfeval.tasks.policy_optimization.PolicyOptimizationFamily): the reach task
    # for a tabular learner, moves relative to the agent it sees (.optimization)

    def optimization_observer(self, request: GenerationRequest) -> Any:
        from wfeval.benchmarks.pusht import optimization

        return optimization.observer(request)

    def optimization_reward(self, request: GenerationRequest, previous: Any, frame: Any) -> tuple[float, bool]:
        from wfeval.benchmarks.pusht import optimization

        return optimization.reward(request, previous, frame)

    def optimization_command(self, request: GenerationRequest) -> Any:
        from wfeval.benchmarks.pusht import optimization

        return optimization.command(request)

    def optimization_environment(self, request: GenerationRequest) -> Any:
        from wfeval.benchmarks.pusht import optimization

        return optimization.Environment(request)

    def optimization_defaults(self, request: GenerationRequest) -> Mapping[str, Any]:
        from wfeval.benchmarks.pusht import optimization

        return optimization.defaults(request)
