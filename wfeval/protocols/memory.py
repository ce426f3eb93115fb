"""``protocol=memory`` (``task=memory`` selects it): open loop over trajectories that leave places and
come back, planned by the benchmark from its exact state (``task.data.memory.gaps``), or found in a
dataset's recorded state (``task.data.memory.state_key``, ``tolerance``: :mod:`wfeval.benchmarks.episodes.revisits`).

The samples are the benchmark's (:func:`wfeval.tasks.memory.memory_request`: the plan's actions,
the true video, the static masks, the revisit pairs and the loops); the model generates them as in
open loop (a step-only model is stepped through the actions). ``revisit_error`` and
``reversibility_error`` score them. A benchmark that can neither plan nor find revisits
(:class:`~wfeval.tasks.memory.RevisitPlanner`, :class:`~wfeval.tasks.memory.RevisitFinder`) is
refused before any generation (:data:`wfeval.tasks.memory.NEED`).
"""

from __future__ import annotations

from typing import Any

from wfeval.models.protocol import has_generate
from wfeval.protocols.base import Protocol, ProtocolRun, need_steps
from wfeval.tasks import memory


class Memory(Protocol):
    driver = "memory"
    task_kinds = ("memory",)
    needs_steps = False
    family_need = memory.NEED

    def identity(self, run: ProtocolRun) -> None:
        return None  # the model's own key: the samples carry the whole plan

    def check(self, model: Any, benchmark: Any) -> None:
        super().check(model, benchmark)
        if not has_generate(model):
            need_steps(model, self.driver)

    def drive(self, model: Any, benchmark: Any, store: Any, run: ProtocolRun, policy: Any = None) -> Any:
        if has_generate(model):
            return model
        from wfeval.models.stepping import StepLoop

        return StepLoop(model)
