"""A paired comparison as text: its table (one line per measurement: ``A − B`` with its unit, the
interval, p, Holm's p, n, the verdict) and the lines above and below it (who is A and B, the
samples, the methods, the correction)."""

from __future__ import annotations

from wfeval.report.ladder import differ_only_below
from wfeval.report.numbers import HYPHEN, fmt, p_value, signed
from wfeval.report.paired.comparison import ALPHA, Comparison
from wfeval.report.runs import column_key
from wfeval.report.units import with_unit


def comparison_table(comparison: Comparison, alpha: float = ALPHA) -> tuple[list[str], list[list[str]]]:
    header = ["measurement", "A − B", f"{comparison.confidence:.0%} CI", "p", "p (Holm)", "n", "verdict"]
    body = []
    prefix = f"{comparison.a.benchmark}."
    for d in comparison.differences:
        name = d.measurement[len(prefix):] if d.measurement.startswith(prefix) else d.measurement
        if d.reason:
            body.append([name, HYPHEN, HYPHEN, HYPHEN, HYPHEN, str(d.n or HYPHEN), f"not compared: {d.reason}"])
            continue
        body.append([name, with_unit(signed(d.estimate), d.unit), f"[{fmt(d.low)}, {fmt(d.high)}]",
                     p_value(d.p), p_value(d.p_adjusted), str(d.n),
                     d.verdict(alpha, comparison.label_a, comparison.label_b)])
    return header, body


def describe(comparison: Comparison, alpha: float = ALPHA) -> list[str]:
    """The lines above and below the table: who is A and B, the samples, the methods, the correction."""
    c = comparison
    lines = [f"paired comparison on {column_key(c.a)}: A = {c.label_a}, B = {c.label_b}",
             f"{c.shared} shared samples (same id and content); A − B of each measurement's aggregate on the "
             "samples both scored", *c.notes]
    small = [d for d in c.differences if d.exact and d.n and 2.0 / 2 ** d.n * max(c.family_size, 1) >= alpha]
    tail = [f"interval: paired bootstrap ({c.n_resamples} resamples of the shared samples, seed {c.seed}); p: "
            "two-sided permutation test (values swapped within samples; exact when 2^n <= resamples); FVD: paired "
            "bootstrap of both distances on the same draws, p from it",
            f"multiple comparisons: Holm–Bonferroni over {c.family_size} tests; a difference is called when the "
            f"Holm-adjusted p < {alpha:g}"]
    if small:
        n = min(d.n for d in small)
        tail.append(f"with {n} samples the smallest possible p is {2 / 2 ** n:.3g} ({2 / 2 ** n * c.family_size:.3g} "
                    "after Holm): too few samples to call any difference; evaluate more samples")
    below = differ_only_below(c, alpha)
    return lines + ["TABLE"] + tail + ([below] if below else [])
