"""``protocol=memory`` (``task=memory`` selects it): open loop over trajectories that leave places and
come back, planned by the benchmark from its exact state (``task.data.memory.gaps``).

The samples are the benchmark's (:func:`wfeval.benchmarks.base.memory_request`: the plan's actions,
the true video, the static masks, the revisit pairs and the loops); the model generates them as in
open loop (a step-only model is stepped through the actions). ``revisit_error`` and
``reversibility_error`` score them. A benchmark that cannot plan revisits
(:class:`~wfeval.benchmarks.base.RevisitPlanner`) is refused before any generation.
"""

from __future__ import annotations

from typing import Any

from wfeval.benchmarks.base import RevisitPlanner
from wfeval.config.errors import ConfigError
from wfeval.models.protocol import has_generate
from wfeval.protocols.base import Protocol, ProtocolRun, need_steps


class Memory(Protocol):
    driver = "memory"
    task_kinds = ("memory",)
    needs_steps = False

    def identity(self, run: ProtocolRun) -> None:
        return None  # the model's own key: the samples carry the whole plan

    def check(self, model: Any, benchmark: Any) -> None:
        if not isinstance(benchmark, RevisitPlanner):
            name = getattr(getattr(benchmark, "spec", None), "name", type(benchmark).__name__)
            raise ConfigError(f"protocol=memory: benchmark {name!r} cannot plan revisits from its exact state (it "
                              "offers no revisit_plan / simulate / static_masks: "
                              "wfeval.benchmarks.base.RevisitPlanner); use benchmark=gridworld or memory_maze, or a family that "
                              "declares them")
        if not has_generate(model):
            need_steps(model, self.driver)

    def drive(self, model: Any, benchmark: Any, store: Any, run: ProtocolRun, policy: Any = None) -> Any:
        if has_generate(model):
            return model
        from wfeval.models.stepping import StepLoop

        return StepLoop(model)
