"""The Push-T benchmark (``benchmark=pusht``): gym-pusht recorded offline, continuous actions, exact state."""

from __future__ import annotations

from typing import Any, Mapping

from wfeval.benchmarks.pusht import simulator
from wfeval.benchmarks.pusht.policy import PushTPolicy
from wfeval.benchmarks.recorded.adapter import RecordedBenchmark


class PushTBenchmark(RecordedBenchmark):
    """See :class:`~wfeval.benchmarks.recorded.adapter.RecordedBenchmark` for the sample layout.

    An action is the agent's target position, two float32 px in [0, 512] (the declared
    ``BenchmarkSpec.action_space``, handed to models as ``controls["action_space"]``);
    ``task=probing`` reads the exact state (:data:`simulator.STATE_VARIABLES`) of every frame.
    ``env.observation_size`` pins the rendered frame's side (96 px, as gym-pusht and LeRobot's
    Push-T data render it).
    """

    family = "pusht"
    simulator_module = simulator
    policy_class = PushTPolicy
    option_schemas = {"env": simulator.DEFAULTS, "policy": PushTPolicy}

    def __init__(self, env: Mapping[str, Any] | None = None, **options: Any):
        super().__init__(env=simulator.check_config(env or {}), **options)

    def state_variables(self) -> tuple:
        return simulator.STATE_VARIABLES
