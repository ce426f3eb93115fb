"""A regression gate for CI: ``python -m wfeval.compare CANDIDATE BASELINE --gate psnr=0.5 --gate ssim``.

Each gate declares a measure (``psnr`` or ``gridworld.psnr``) and a margin in the measure's own
unit (``=0.5``; none: 0). On the paired comparison ``candidate − baseline`` that ``compare``
computes (:mod:`wfeval.report.paired.comparison`: the shared samples, the paired bootstrap
interval, the permutation p-value), a measure **regressed** when both hold:

- the difference is worse than the margin in the measure's direction (``A − B < −margin`` for
  higher-is-better, ``> +margin`` for lower-is-better), and
- the difference is called: its p-value, Holm-adjusted over the gated tests (every gate of every
  comparison: the hypotheses the gate decides), is below alpha. A worse value that this many
  samples cannot tell from noise does not fail the gate, and says so.

A gated measure that could not be checked fails the gate, with the reason: not compared (another
metric version, no sample scored by both, ...), or too few samples for any difference to be called
(an exact permutation test on n samples cannot give p below 2/2^n: with the Holm factor at or above
alpha, no regression could ever fail the gate). A gate never passes what it did not check. The
regressed samples are those of a regressed measure whose own ``A − B`` is worse than the margin,
worst first. With ``--baseline MODEL`` every other row is gated against it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

from wfeval.report.numbers import fmt, p_value, signed
from wfeval.report.paired.comparison import Comparison, Difference
from wfeval.report.units import with_unit
from wfeval.stats import paired as paired_stats

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
    verdict: str = ""  # "regressed", "passed" or "not checked"
    why: str = ""  # one line: the numbers and the rule, or why it could not be checked
    p_gate: float | None = None  # p, Holm-adjusted over the gated tests
    samples: list[tuple[str, float, float]] = field(default_factory=list)  # (id, A, B), worst first

    @property
    def failed(self) -> bool:
        """Regressed, or not checked: either fails the gate."""
        return self.verdict != "passed"


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
            if found[0].higher_is_better is None:
                raise ValueError(f"--gate {gate.measure}: {found[0].measurement} has no better direction; it "
                                 "cannot regress")
            findings.append(Finding(comparison, gate, found[0]))
    tested = [f for f in findings if not f.difference.reason and f.difference.p is not None]
    for f, p in zip(tested, paired_stats.holm([f.difference.p for f in tested])):
        f.p_gate = p
    for f in findings:
        _judge(f, alpha, len(tested))
    return findings


def _judge(f: Finding, alpha: float, family: int) -> None:
    d, margin = f.difference, f.gate.margin
    if d.reason or d.estimate is None or f.p_gate is None:
        f.verdict, f.why = "not checked", d.reason or "no difference computed"
        return
    numbers = (f"{with_unit(signed(d.estimate), d.unit)} [{fmt(d.low)}, {fmt(d.high)}], p {p_value(d.p)} "
               f"(Holm over {family} gated: {p_value(f.p_gate)}), n {d.n}; margin {fmt(margin)}")
    smallest = min(1.0, 2.0 / 2 ** d.n * family) if d.exact else 0.0
    if smallest >= alpha:
        f.verdict = "not checked"
        f.why = (f"too few samples ({d.n}): the smallest p they can give is {2.0 / 2 ** d.n:.3g}, "
                 f"{smallest:.3g} after Holm, not below {alpha:g}, so no regression could be called; evaluate "
                 f"more samples: {numbers}")
        return
    beyond = _worse(d, d.estimate, margin)
    f.verdict = "regressed" if beyond and f.p_gate < alpha else "passed"
    if f.verdict == "regressed":
        f.why = numbers
        worse = [(s, a, b) for s, (a, b) in d.pairs.items() if _worse(d, a - b, margin)]
        f.samples = sorted(worse, key=lambda r: (r[1] - r[2]) * (1 if d.higher_is_better else -1))
    elif beyond:
        f.why = f"worse than the margin but not significant (Holm-adjusted p >= {alpha:g}): {numbers}"
    else:
        f.why = numbers


def render(findings: list[Finding]) -> str:
    lines = []
    for f in findings:
        c, name = f.comparison, f.difference.measurement
        lines.append(f"gate {name} ({c.label_a} − {c.label_b}): {f.verdict}: {f.why}")
        if f.verdict == "regressed" and f.difference.pairs:
            lines.append(f"  {len(f.samples)} regressed sample(s) (worse than the margin, worst first):")
            for sample, a, b in f.samples[:SHOWN_SAMPLES]:
                lines.append(f"    {sample}  {c.label_a} {fmt(a)}  {c.label_b} {fmt(b)}  "
                             f"({with_unit(signed(a - b), f.difference.unit)})")
            if len(f.samples) > SHOWN_SAMPLES:
                lines.append(f"    … and {len(f.samples) - SHOWN_SAMPLES} more")
        elif f.verdict == "regressed":
            lines.append("  no per-sample values: the measure compares the sets of samples (FVD)")
    failed = [f for f in findings if f.failed]
    lines.append(f"gate failed: {len(failed)} of {len(findings)} gated measure(s) regressed or not checked"
                 if failed else f"gate passed: no regression on {len(findings)} gated measure(s)")
    return "\n".join(lines)
