"""What a task needs of a benchmark family, declared once in the task's module."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wfeval.config.errors import ConfigError


@dataclass(frozen=True)
class FamilyNeed:
    """The interfaces a task needs of a benchmark (a family that offers any one of them serves it) and
    the refusal when it offers none: ``refusal`` names the interfaces and where the task runs, with
    ``{name}`` standing for the benchmark's name. ``evidence``: the measures a result of the task
    needs to count (the evidence gate holds these to the benchmark's rules, in place of the
    benchmark's pixel suite, which such a task may not score: probes, goal success); empty: the
    benchmark's metric suite, as for a video task."""

    task: str
    interfaces: tuple[type, ...]
    refusal: str
    evidence: tuple[str, ...] = ()

    def served_by(self, benchmark: Any) -> bool:
        return isinstance(benchmark, self.interfaces)

    def check(self, benchmark: Any) -> None:
        """ConfigError, before any generation, when ``benchmark`` offers none of the interfaces."""
        if not self.served_by(benchmark):
            raise ConfigError(self.refusal.format(name=benchmark_name(benchmark)))


def benchmark_name(benchmark: Any) -> str:
    return getattr(getattr(benchmark, "spec", None), "name", type(benchmark).__name__)


def objective_from_frames(benchmark: Any) -> bool:
    """The family's optional ``objective_from_frames`` (default False) of ``task=policy_evaluation`` and
    ``task=policy_optimization``: True when the task's objective is read off the frames (the family's
    ``frame_reward`` / ``optimization_reward``) even for a model that reports a reward of its own — that
    reward is a different quantity (the recorded families: the game's score, not tracking the
    demonstration). The one reading of it; anything but a bool is the family's error, said so."""
    value = getattr(benchmark, "objective_from_frames", False)
    if not isinstance(value, bool):
        raise ConfigError(f"benchmark {benchmark_name(benchmark)!r}: objective_from_frames must be True or False, "
                          f"got {value!r}")
    return value
