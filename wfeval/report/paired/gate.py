"""A regression gate for CI: ``python -m wfeval.compare CANDIDATE BASELINE --gate psnr=0.5 --gate ssim``.

Each gate declares a measure (``psnr`` or ``gridworld.psnr``) and a margin in the measure's own
unit (``=0.5``; none: 0). On the paired comparison ``candidate − baseline`` that ``compare``
computes (:mod:`wfeval.report.paired.comparison`: the shared samples, the paired bootstrap
interval, the permutation p-value, Holm over every measurement compared), a measure **regressed**
when both hold:

- the difference is worse than the margin in the measure's direction (``A − B < −margin`` for
  higher-is-better, ``> +margin`` for lower-is-better), and
- the comparison calls it (Holm-adjusted p < alpha, the verdict "baseline better"): a worse value
  that this many samples cannot tell from noise does not fail the gate.

A gated measure that could not be checked (not compared: another metric version, no shared
scored sample, ...) fails the gate as well, with the reason: a gate never passes a measure it did
not check. The regressed samples are those of a regressed measure whose own ``A − B`` is worse
than the margin, worst first. With ``--baseline MODEL`` every other row is gated against it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from wfeval.report.numbers import fmt, p_value, signed
from wfeval.report.paired.comparison import Comparison, Difference
from wfeval.report.units import with_unit

SHOWN_SAMPLES = 20  # regressed samples printed per measure (all are counted)


@dataclass(frozen=True)
class Gate:
    measure: str  # a metric id (psnr) or a measurement id (gridworld.psnr)
    margin: float = 0.0

    def matches(self, measurement: str) -> bool:
        return measurement == self.measure or measurement.endswith("." + self.measure)


def parse_gate(text: str) -> Gate:
    """``psnr`` / ``psnr=0.5`` / ``gridworld.psnr=0.5`` (a margin is a non-negative number)."""
    measure, _, margin = text.partition("=")
    if not measure.strip():
        raise ValueError(f"--gate {text!r}: name a measure, e.g. --gate psnr=0.5")
    try:
        value = float(margin) if margin.strip() else 0.0
    except ValueError:
        raise ValueError(f"--gate {text!r}: the margin after '=' is a number in the measure's unit") from None
    if not math.isfinite(value) or value < 0:
        raise ValueError(f"--gate {text!r}: the margin is a non-negative number, got {margin}")
    return Gate(measure.strip(), value)


@dataclass
class Finding:
    comparison: Comparison
    gate: Gate
    difference: Difference
    regressed: bool
    why: str  # one line: the numbers and the rule, or why it could not be checked
    samples: list[tuple[str, float, float]] = field(default_factory=list)  # (id, A, B), worst first


def _worse(d: Difference, delta: float, margin: float) -> bool:
    return delta < -margin if d.higher_is_better else delta > margin


def check(comparisons: list[Comparison], gates: list[Gate], alpha: float) -> list[Finding]:
    """One finding per gate and comparison. ValueError: nothing to gate, or a gate that names no
    measurement of a comparison, or one without a direction."""
    if not comparisons:
        raise ValueError("--gate compares a candidate with a baseline: give two runs (CANDIDATE BASELINE) or "
                         "--baseline MODEL")
    findings = []
    for comparison in comparisons:
        for gate in gates:
            found = [d for d in comparison.differences if gate.matches(d.measurement)]
            if len(found) != 1:
                names = ", ".join(d.measurement for d in comparison.differences)
                raise ValueError(f"--gate {gate.measure}: {'several' if found else 'no'} measurement of "
                                 f"{comparison.label_a} vs {comparison.label_b} matches; they are: {names}")
            findings.append(_finding(comparison, gate, found[0], alpha))
    return findings


def _finding(comparison: Comparison, gate: Gate, d: Difference, alpha: float) -> Finding:
    if d.higher_is_better is None:
        raise ValueError(f"--gate {gate.measure}: {d.measurement} has no better direction; it cannot regress")
    if d.reason or d.estimate is None:
        return Finding(comparison, gate, d, True, f"not checked: {d.reason or 'no difference computed'}")
    called = d.verdict(alpha, "A", "B") == "B better"
    beyond = _worse(d, d.estimate, gate.margin)
    numbers = (f"{with_unit(signed(d.estimate), d.unit)} [{fmt(d.low)}, {fmt(d.high)}], p (Holm) "
               f"{p_value(d.p_adjusted)}, n {d.n}; margin {fmt(gate.margin)}")
    regressed = called and beyond
    if regressed:
        why = f"regressed: {numbers}"
    elif beyond:
        why = f"passed: worse than the margin but not significant (Holm-adjusted p >= {alpha:g}): {numbers}"
    else:
        why = f"passed: {numbers}"
    samples = []
    if regressed:
        worse = [(s, a, b) for s, (a, b) in d.pairs.items() if _worse(d, a - b, gate.margin)]
        samples = sorted(worse, key=lambda r: (r[1] - r[2]) * (1 if d.higher_is_better else -1))
    return Finding(comparison, gate, d, regressed, why, samples)


def render(findings: list[Finding]) -> str:
    lines = []
    for f in findings:
        c, name = f.comparison, f.difference.measurement
        lines.append(f"gate {name} ({c.label_a} − {c.label_b}): {f.why}")
        if f.regressed and f.difference.pairs:
            lines.append(f"  {len(f.samples)} regressed sample(s) (worse than the margin, worst first):")
            for sample, a, b in f.samples[:SHOWN_SAMPLES]:
                lines.append(f"    {sample}  {c.label_a} {fmt(a)}  {c.label_b} {fmt(b)}  "
                             f"({with_unit(signed(a - b), f.difference.unit)})")
            if len(f.samples) > SHOWN_SAMPLES:
                lines.append(f"    … and {len(f.samples) - SHOWN_SAMPLES} more")
        elif f.regressed and f.difference.estimate is not None:
            lines.append("  no per-sample values: the measure compares the sets of samples (FVD)")
    failed = [f for f in findings if f.regressed]
    lines.append(f"gate failed: {len(failed)} of {len(findings)} gated measure(s) regressed or unchecked"
                 if failed else f"gate passed: no regression on {len(findings)} gated measure(s)")
    return "\n".join(lines)
