"""``protocol=memory`` (``task=memory`` selects it): open loop over trajectories that leave places and
come back, planned by the benchmark from its exact state (``task.data.memory.gaps``), or found in a
dataset's recorded state (``task.data.memory.state_key``, ``tolerance``: :mod:`wfeval.benchmarks.episodes.revisits`).

The samples are the benchmark's (:func:`wfeval.benchmarks.base.memory_request`: the plan's actions,
the true video, the static masks, the revisit pairs and the loops); the model generates them as in
open loop (a step-only model is stepped through the actions). ``revisit_error`` and
``reversibility_error`` score them. A benchmark that can neither plan nor find revisits
(:class:`~wfeval.benchmarks.base.RevisitPlanner`, :class:`~wfeval.benchmarks.base.RevisitFinder`) is
refused before any generation.
"""

from __future__ import annotations

from typing import Any

from wfeval.benchmarks.base import RevisitFinder, RevisitPlanner
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
        if not isinstance(benchmark, (RevisitPlanner, RevisitFinder)):
            name = getattr(getattr(benchmark, "spec", None), "name", type(benchmark).__name__)
            raise ConfigError(f"protocol=memory: benchmark {name!r} can neither plan revisits from its exact state "
                              "(revisit_plan / simulate / static_masks: wfeval.benchmarks.base.RevisitPlanner) nor "
                              "find them in a recorded state (wfeval.benchmarks.base.RevisitFinder); use "
                              "benchmark=gridworld or memory_maze, a dataset with a pose or state column "
                              "(benchmark=lerobot, hdf5, minari: docs/dataset-readers.md#memory), or a family that "
                              "declares them")
        if not has_generate(model):
            need_steps(model, self.driver)

    def drive(self, model: Any, benchmark: Any, store: Any, run: ProtocolRun, policy: Any = None) -> Any:
        if has_generate(model):
            return model
        from wfeval.models.stepping import StepLoop

        return StepLoop(model)
