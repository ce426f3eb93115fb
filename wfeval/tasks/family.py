"""What a task needs of a benchmark family, declared once in the task's module."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wfeval.config.errors import ConfigError


@dataclass(frozen=True)
class FamilyNeed:
    """The interfaces a task needs of a benchmark (a family that offers any one of them serves it) and
    the refusal when it offers none: ``refusal`` names the interfaces and where the task runs, with
    ``{name}`` standing for the benchmark's name."""

    task: str
    interfaces: tuple[type, ...]
    refusal: str

    def served_by(self, benchmark: Any) -> bool:
        return isinstance(benchmark, self.interfaces)

    def check(self, benchmark: Any) -> None:
        """ConfigError, before any generation, when ``benchmark`` offers none of the interfaces."""
        if not self.served_by(benchmark):
            raise ConfigError(self.refusal.format(name=benchmark_name(benchmark)))


def benchmark_name(benchmark: Any) -> str:
    return getattr(getattr(benchmark, "spec", None), "name", type(benchmark).__name__)
