"""A protocol is one class and one config file (``conf/protocol/<name>.yaml``, ``_target_`` the class).

The class owns:

- its **options**: its ``__init__`` parameters; the config schema is derived from them
  (:mod:`wfeval.config.derive`); the keys every protocol has (``name``, ``context_frames``,
  ``metric_ids``, ``metric_groups``, ``description``, ``metadata``) are read by the core into the
  :class:`~wfeval.api.EvaluationProtocolSpec` and never reach the class;
- **which tasks** it serves (``task_kinds``: values of ``task.evaluation_protocol``);
- **its identity**: what joins the generation cache key (:meth:`identity`), so outputs of
  different protocols or settings are never confused, and what ``manifest.json`` and
  ``results.json`` record of it (:meth:`record`);
- **whether a model and a benchmark can run it** (:meth:`check`, before any generation): what
  its task needs of a benchmark family is declared in the task's module (``family_need``, a
  :class:`~wfeval.tasks.family.FamilyNeed` of :mod:`wfeval.tasks`), checked here;
- **how generation is driven** (:meth:`drive`): the object whose ``generate(requests)`` the
  pipeline calls — the model itself, or a driver around it (:mod:`wfeval.protocols.drivers`).

Adding a protocol touches its module and its config file only (docs/architecture.md).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

from wfeval.api import EvaluationProtocolSpec, WorldTaskConfig
from wfeval.config.errors import ConfigError
from wfeval.models import interfaces
from wfeval.tasks.family import FamilyNeed


@dataclass(frozen=True)
class ProtocolRun:
    """What a protocol may read of the run beside its own options."""

    spec: EvaluationProtocolSpec
    task: WorldTaskConfig
    policy: Mapping[str, Any] | None = None  # the run's ``policy`` config (plain), for a protocol that uses one
    extra: Mapping[str, Any] = field(default_factory=dict)


class Protocol:
    """Base of every protocol (see the module doc)."""

    driver: ClassVar[str] = ""  # what manifest.json / results.json record as the protocol's driver
    task_kinds: ClassVar[tuple[str, ...]] = ("reference_metrics",)
    needs_steps: ClassVar[bool] = True  # the model must have start(request) / step(state, actions)
    needs_simulator: ClassVar[bool] = False  # the benchmark must replay actions (simulate)
    uses_policy: ClassVar[bool] = False  # the run's `policy` group chooses actions
    family_need: ClassVar[FamilyNeed | None] = None  # what the task needs of the benchmark (wfeval.tasks)
    chunk: int = 1  # actions per model call

    def identity(self, run: ProtocolRun) -> dict[str, Any] | None:
        """What this protocol adds to the generation identity (None: the model's own key)."""
        return {"driver": self.driver, "name": run.spec.name, "chunk": self.chunk}

    def record(self, run: ProtocolRun) -> dict[str, Any]:
        """What manifest.json and results.json say about the protocol (leaderboards keep them apart)."""
        kept = {k: v for k, v in (self.identity(run) or {}).items() if k not in ("driver", "name", "task_data")}
        return {"name": run.spec.name, "driver": self.driver, **kept}

    def check_task(self, run: ProtocolRun) -> None:
        """ConfigError when the task is of a kind this protocol does not serve."""
        kind = run.task.evaluation_protocol
        if kind not in self.task_kinds:
            raise ConfigError(
                f"protocol={run.spec.name} serves tasks of kind {' or '.join(map(repr, self.task_kinds))} "
                f"(task.evaluation_protocol), but task {run.task.name!r} is of kind {kind!r}; pick "
                f"protocol={run.task.protocol} (the task's own) or another task")

    def check(self, model: Any, benchmark: Any) -> None:
        """ConfigError, before any generation, when this model and benchmark cannot run the protocol."""
        if self.needs_steps:
            need_steps(model, self.driver)
        if self.needs_simulator:
            need_simulator(benchmark, self.driver)
        if self.family_need is not None:
            self.family_need.check(benchmark)

    def drive(self, model: Any, benchmark: Any, store: Any, run: ProtocolRun, policy: Any = None) -> Any:
        """The object generation calls (``generate(requests)``)."""
        raise NotImplementedError

    def output_keys(self, model: Any, keys: tuple[str, ...]) -> tuple[str, ...]:
        """The outputs every result must hold for this model (the task's ``output_keys``, unless the
        protocol serves the model differently: a latent model planning without a decoder)."""
        return tuple(keys)


def need_steps(model: Any, driver: str) -> None:
    interfaces.require(model, interfaces.STEP, f"protocol.driver={driver}",
                       more="; without it a model can only run protocol=open_loop")


def need_simulator(bench: Any, driver: str) -> Any:
    simulate = getattr(bench, "simulate", None)
    if not callable(simulate):
        name = getattr(getattr(bench, "spec", None), "name", type(bench).__name__)
        raise ConfigError(
            f"protocol={driver} needs a simulator to replay the chosen actions into a reference video, and "
            f"benchmark {name!r} has none (a dataset holds only its recorded actions and videos); use "
            "protocol=open_loop or protocol=autoregressive on it, or a simulator benchmark (gridworld, atari_*, crafter)")
    return simulate
