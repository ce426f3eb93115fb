"""The compact results table printed at the end of a run."""

from __future__ import annotations

from typing import Mapping

from wfeval.api import AggregateResult
from wfeval.results import headline


def _fmt(value: object) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:.4g}"
    return str(value)


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def results_table(results: Mapping[str, AggregateResult], title: str = "") -> str:
    rows = [("measurement", "value", "95% CI", "valid/total", "skipped", "note")]
    for key, agg in results.items():
        ci = agg.confidence_interval
        interval = f"[{_fmt(ci.get('low'))}, {_fmt(ci.get('high'))}]" if ci else "-"
        note = "" if agg.valid else str(agg.diagnostics.get("reason", "invalid"))
        if agg.valid and isinstance(agg.diagnostics.get("ceiling"), float):  # idm_accuracy: what it reads against
            chance = agg.diagnostics.get("chance")
            note = f"IDM ceiling {_fmt(agg.diagnostics['ceiling'])}, chance {_fmt(chance)}"
        if agg.skip_breakdown and agg.valid:
            skips = "; ".join(f"{n}× {reason}" for reason, n in agg.skip_breakdown.items())
            note = f"{note}; {skips}" if note else skips
        elif agg.skip_breakdown:
            note = next(iter(agg.skip_breakdown))
        covered = f"{agg.n_valid}/{agg.n_total}"
        if agg.n_total and agg.n_valid < agg.n_total:  # the value rests on part of the samples: say how much
            covered += f" ({agg.n_valid / agg.n_total:.0%})"
        rows.append((key, _fmt(headline(agg)) if agg.valid else "n/a", interval,
                     covered, str(agg.n_skipped), _clip(note, 70)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = [("  ".join(c.ljust(w) for c, w in zip(r[:-1], widths)) + "  " + r[-1]).rstrip() for r in rows]
    lines.insert(1, "-" * max(len(line) for line in lines))
    return ("\n".join([title, *lines]) if title else "\n".join(lines)).rstrip()


def evidence_line(evidence: Mapping[str, object]) -> str:
    """One line saying whether the result counts for the benchmark, and why not."""
    reasons = list(evidence.get("reasons") or [])  # type: ignore[call-overload]
    if evidence.get("eligible"):
        return "eligible: yes (meets the benchmark's evidence rules)"
    return f"eligible: no ({len(reasons)} reason{'s' if len(reasons) != 1 else ''}): " + "; ".join(reasons)
