"""The decision ladder as a run's reader shows it: the rung of each measurement, the highest rung a
run reached with the measurements that are its evidence, and where two models' differences lie on
the ladder (docs/decision-ladder.md).

A rung is *reached* when the run holds a valid value of a measure that is evidence for it: the
ladder says how far up the evidence goes, the values say whether it is good.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Iterable

from wfeval.metrics.ladder import RUNGS, highest, label, rung_index, rung_of
from wfeval.report.numbers import HYPHEN, fmt
from wfeval.results.record import RunResults


def rungs_of(document: RunResults) -> dict[str, str | None]:
    """Measurement → its rung: as the run recorded it (``metrics.<id>.rung``), else (a run written
    before the ladder) the built-in table's for the measurement's metric id."""
    return {m: document.info(m).rung or rung_of(m) for m in document.results}


@dataclass(frozen=True)
class Reached:
    """The highest rung a run's valid measurements reach (None: none with a rung) and its evidence."""

    rung: str | None
    evidence: list[str] = field(default_factory=list)  # the measurements at that rung

    def short(self, prefix: str = "") -> str:
        """``L3 (agent_position_error)``; ``-`` when no rung is reached; ``prefix`` taken off the ids."""
        if self.rung is None:
            return HYPHEN
        names = [m[len(prefix):] if prefix and m.startswith(prefix) else m for m in self.evidence]
        return f"{self.rung} ({', '.join(names)})"

    def title(self) -> str:
        return "no measure of this run is evidence for a rung" if self.rung is None else (
            f"{label(self.rung)}: {', '.join(self.evidence)}")


def reached(document: RunResults) -> Reached:
    """The highest rung with a valid measurement of the run, and those measurements."""
    valid = [m for m, a in document.results.items() if a.valid]
    return Reached(*highest(rungs_of(document), valid))


def ladder_markdown(document: RunResults) -> list[str]:
    """results.md's ``## Decision ladder``: the highest rung reached, then each rung with its measurements."""
    rungs, top = rungs_of(document), reached(document)
    if top.rung is None:
        return []
    lines = ["## Decision ladder", "",
             f"highest rung reached: **{label(top.rung)}**, evidence: "
             + ", ".join(f"{m} = {fmt(document.results[m].value)}" for m in top.evidence), ""]
    table = []
    for rung in RUNGS:
        held = [m for m, r in rungs.items() if r == rung]
        if held:
            table.append(f"| {label(rung)} | " + ", ".join(
                m if document.results[m].valid else f"{m} (no value)" for m in held) + " |")
    return lines + ["| rung | measurements |", "| --- | --- |", *table, ""]


def differ_only_below(comparison: Any, alpha: float) -> str | None:
    """The line that says two models differ only below a rung (``comparison``: a
    :class:`~wfeval.report.paired.Comparison`): some measurement differs
    significantly, but none at the highest rung both runs measured. None otherwise."""
    rungs = {**rungs_of(comparison.b.document), **rungs_of(comparison.a.document)}
    compared = [d for d in comparison.differences if not d.reason and rungs.get(d.measurement)]
    differing = [d for d in compared if d.verdict(alpha) not in ("not significant", "not compared")]
    if not compared or not differing:
        return None
    top = max((rungs[d.measurement] for d in compared), key=rung_index)
    below = max((rungs[d.measurement] for d in differing), key=rung_index)
    if rung_index(below) >= rung_index(top):
        return None
    at_top = _names(d.measurement for d in compared if rungs[d.measurement] == top)
    where = _names(d.measurement for d in differing)
    return (f"decision ladder: {comparison.label_a} and {comparison.label_b} differ only below {top} "
            f"({RUNGS[top]}): their differences ({where}; highest {below}) do not show at {top} ({at_top})")


def _names(measurements: Iterable[str]) -> str:
    return ", ".join(m.split(".", 1)[-1] for m in measurements)
