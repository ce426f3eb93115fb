"""What a latent run's probe measures are read against, as every rendering shows it (the terminal
table, ``results.md``, the HTML report, trackers): chance and ceiling beside each score, the
latents' effective rank (a collapse check), the mean per state variable, the curve over the
imagined horizon in numeric order, and an imagined R² flagged when the predictor leaves the
encoder's range (wfeval/metrics/probing.py writes them into each aggregate's ``diagnostics``).

An aggregate of another measure with ``chance`` / ``ceiling`` (``idm_accuracy``) is read the same
way by :func:`level_values`; its note stays its own (wfeval/report/table.py).
"""

from __future__ import annotations

import re
from typing import Any, Iterable, Mapping

from wfeval.report.escape import markdown_table, md_cell
from wfeval.report.numbers import HYPHEN, fmt, number

#: what an imagined R² flagged ``off_range`` reads as, in place of its number
OFF_RANGE = "off range (< -1)"
OFF_RANGE_NOTE = "⚠ the predictor leaves the encoder's range (imagined R² < -1): not a number to compare"
_HORIZON = re.compile(r"^(?:(?P<bench>.+)\.)?imagined_probe_r2_k(?P<k>\d+)$")
_OBSERVED = re.compile(r"^(?:(?P<bench>.+)\.)?probe_r2$")


def is_probe(diagnostics: Mapping[str, Any] | None) -> bool:
    """An aggregate of a probe measure (what :mod:`wfeval.metrics.probing` writes): chance, ceiling
    and the per-variable means."""
    d = diagnostics or {}
    return isinstance(d.get("variables"), Mapping) and number(d.get("ceiling")) is not None


def off_range(diagnostics: Mapping[str, Any] | None) -> bool:
    return bool((diagnostics or {}).get("off_range"))


def levels_note(diagnostics: Mapping[str, Any] | None) -> str:
    """``chance 0.388, ceiling 1; effective rank 5.9 of 64`` (and the off-range flag first) for a
    probe aggregate; empty for anything else."""
    d = diagnostics or {}
    if not is_probe(d):
        return ""
    parts = [f"chance {fmt(number(d.get('chance')))}, ceiling {fmt(number(d.get('ceiling')))}"]
    rank = number(d.get("effective_rank"))
    if rank is not None:
        parts.append(f"effective rank {rank:.3g} of {d.get('latent_dim', '?')}")
    note = "; ".join(parts)
    return f"{OFF_RANGE_NOTE}; {note}" if off_range(d) else note


def shown_value(diagnostics: Mapping[str, Any] | None, text: str) -> str:
    """A table's value cell: :data:`OFF_RANGE` for a flagged imagined R², else ``text``."""
    return OFF_RANGE if off_range(diagnostics) else text


def level_values(diagnostics: Mapping[str, Any] | None) -> dict[str, float]:
    """The numbers a tracker logs beside a measurement's value: ``chance``, ``ceiling``,
    ``effective_rank``, ``off_range`` (1) and ``variable/<name>`` (the mean per state variable)."""
    d = diagnostics or {}
    out: dict[str, float] = {}
    for key in ("chance", "ceiling", "effective_rank"):
        if (value := number(d.get(key))) is not None:
            out[key] = value
    if off_range(d):
        out["off_range"] = 1.0
    for name, value in (d.get("variables") or {}).items() if isinstance(d.get("variables"), Mapping) else ():
        if (value := number(value)) is not None:
            out[f"variable/{name}"] = value
    return out


def horizon_of(measurement: str) -> int | None:
    """0 for ``probe_r2`` (observed), ``k`` for ``imagined_probe_r2_k<k>``, None for anything else."""
    if _OBSERVED.match(measurement):
        return 0
    found = _HORIZON.match(measurement)
    return int(found.group("k")) if found else None


def horizon_order(measurements: Iterable[str]) -> list[str]:
    """The probe R² measurements among ``measurements`` by horizon, in numeric order (observed,
    k1, k2, k4, k8, k16: never the string order k1, k16, k2)."""
    found = [(horizon_of(m), m) for m in measurements]
    return [m for k, m in sorted((k, m) for k, m in found if k is not None)]


def probes_markdown(results: Mapping[str, Any]) -> list[str]:
    """``results.md``'s section of a run with probes: each probe measure with chance, ceiling and
    the latents' effective rank (the curve over the horizon in numeric order), then the mean per
    state variable. ``results``: measurement → aggregate (``RunResults.results``). Empty without probes."""
    probes = {m: a for m, a in results.items() if is_probe(a.diagnostics)}
    if not probes:
        return []
    ordered = horizon_order(probes) + [m for m in probes if horizon_of(m) is None]
    body = []
    for m in ordered:
        d = probes[m].diagnostics
        rank = number(d.get("effective_rank"))
        body.append([m, shown_value(d, fmt(probes[m].value)), fmt(number(d.get("chance"))),
                     fmt(number(d.get("ceiling"))),
                     HYPHEN if rank is None else f"{rank:.3g} of {d.get('latent_dim', '?')}"])
    lines = ["## Probes", "", markdown_table(["measurement", "value", "chance", "ceiling", "effective rank"], body)]
    if any(off_range(a.diagnostics) for a in probes.values()):
        lines += ["", md_cell(OFF_RANGE_NOTE)]  # a line of text: escaped here
    variables = dict.fromkeys(v for m in ordered for v in probes[m].diagnostics["variables"])
    lines += ["", "Mean per state variable:", "", markdown_table(
        ["variable", *[m.split(".", 1)[-1] for m in ordered]],
        [[v, *[fmt(number(probes[m].diagnostics["variables"].get(v))) for m in ordered]] for v in variables])]
    return ["", *lines, ""]
