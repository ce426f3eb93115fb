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
