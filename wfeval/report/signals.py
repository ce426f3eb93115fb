"""Weak signals: numbers that cannot tell models apart, flagged wherever the number is shown.

The one home of the rule; each view renders what :func:`flags` returns for an aggregate (a run's
:class:`~wfeval.api.AggregateResult` or results.json's :class:`~wfeval.results.record.Aggregate`):
the terminal table (:mod:`wfeval.report.table`), ``results.md`` (:mod:`wfeval.report.markdown`), the
leaderboard cells of ``compare`` and of the HTML report (:mod:`wfeval.report.leaderboard.model`) and
the report's measurement table.

- ``idm_too_weak`` — a measure read by an inverse-dynamics model (``idm_accuracy``) whose **ceiling**
  (the same IDM on the samples' real reference transitions) does not clear its **chance** level: the
  ceiling's interval reaches chance (its lower bound ≤ chance; the ceiling itself when it has no
  interval). The IDM cannot read the actions even off the true videos, so no model's value can be
  told from chance, nor from another's.
- ``at_chance`` — the value's interval contains the measure's chance level (``diagnostics.chance``:
  the score of a model that ignores what is measured; for R², the IDM on each sample's first frame held still).
- ``prior_only`` — a rating (the arena's Elo) whose value and interval come from the prior alone,
  not from votes (``diagnostics.prior_only``: why, as :func:`wfeval.stats.ratings.unbounded` says).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping

from wfeval.report.numbers import fmt, number

MARK = "⚠"


@dataclass(frozen=True)
class Flag:
    code: str  # idm_too_weak | at_chance | prior_only
    label: str  # a few words, beside the number
    detail: str  # one sentence: what it means

    def __str__(self) -> str:
        return f"{MARK} {self.label}"


def _interval(block: Any) -> tuple[float | None, float | None]:
    if not isinstance(block, Mapping):
        return None, None
    return number(block.get("low")), number(block.get("high"))


def flags(agg: Any) -> list[Flag]:
    """The weak-signal flags of one aggregate (empty for an invalid one or a strong signal)."""
    if agg is None or not getattr(agg, "valid", False):
        return []
    diagnostics = getattr(agg, "diagnostics", None) or {}
    chance = number(diagnostics.get("chance"))
    out = []
    ceiling = number(diagnostics.get("ceiling"))
    if ceiling is not None and chance is not None and "idm" in diagnostics:
        low, high = _interval(diagnostics.get("ceiling_interval"))
        reach = low if low is not None else ceiling
        if reach <= chance:
            shown = fmt(ceiling) + (f" [{fmt(low)}, {fmt(high)}]" if low is not None and high is not None else "")
            out.append(Flag("idm_too_weak", "IDM too weak",
                            f"the IDM's ceiling {shown} (on the real videos) does not clear chance {fmt(chance)}: "
                            "it cannot read the actions, so this measure cannot tell models apart"))
    low, high = _interval(getattr(agg, "confidence_interval", None))
    if chance is not None and low is not None and high is not None and low <= chance <= high:
        out.append(Flag("at_chance", "at chance",
                        f"the interval [{fmt(low)}, {fmt(high)}] contains chance {fmt(chance)}: not told apart "
                        "from a model that ignores what is measured"))
    why = diagnostics.get("prior_only")
    if why:
        out.append(Flag("prior_only", "prior only",
                        f"the rating and its interval come from the prior alone, not from votes (it {why} it was in)"))
    return out


def label(agg: Any) -> str:
    """The flags as a table shows them beside the number (``⚠ IDM too weak; ⚠ at chance``; "" for none)."""
    return "; ".join(map(str, flags(agg)))
