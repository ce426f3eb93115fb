"""A run's report in Markdown: measurements, scorecard, evidence and group slices."""

from __future__ import annotations

from wfeval.report.ladder import ladder_markdown
from wfeval.report.numbers import HYPHEN, fmt
from wfeval.report.escape import markdown_table, md_cell
from wfeval.report.probes import probes_markdown, shown_value
from wfeval.report.rows import rows
from wfeval.report.signals import flags, label
from wfeval.report.units import with_unit
from wfeval.results.evidence import grouped_reasons
from wfeval.results.record import RunResults


def results_markdown(document: RunResults) -> str:
    bench = document.benchmark
    n_samples = bench.n_samples if bench.n_samples is not None else "?"
    parts = [f"# {md_cell(document.model.name)} on {md_cell(bench.id)}", "",
             f"run `{md_cell(document.run_id)}` · config `{md_cell(str(document.config_hash)[:12])}` · "
             f"dataset `{md_cell(str(bench.dataset_hash)[:12])}` · "
             f"{md_cell(n_samples)} samples", ""]
    body = [[r["measurement"], " ".join(filter(None, [shown_value(document.results[r["measurement"]].diagnostics,
                                                                   with_unit(fmt(r["value"]), r["unit"])),
                                                       label(document.results[r["measurement"]])])),
             f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}]" if r["ci_method"] else HYPHEN,
             r["ci_method"] or HYPHEN, f"{r['n_valid']}/{r['n_total']}", str(r["n_skipped"])] for r in rows(document)]
    parts += [markdown_table(["measurement", "value", "CI", "CI method", "valid/total", "skipped"], body), ""]
    parts += ladder_markdown(document)
    parts += probes_markdown(document.results)  # chance, ceiling, effective rank, per variable
    parts += weak_signals(document)
    card = document.scorecard
    if card.components:
        parts += ["## Scorecard", "", f"overall: **{md_cell(fmt(card.score))}**"
                  + (f" (missing: {md_cell(', '.join(card.missing))}; partial {fmt(card.partial_score)})"
                     if card.missing else ""), ""]
        parts.append(markdown_table(["metric", "value", "normalized", "weight"], [
            [m, fmt(c.value), fmt(c.normalized) if not c.missing else "missing", fmt(c.weight)]
            for m, c in card.components.items()]))
        parts.append("")
    evidence = document.evidence
    verdict = "**yes**" if evidence.eligible else (
        f"**not assessed** (metrics {md_cell(', '.join(evidence.missing_metrics))} missing)"
        if evidence.missing_metrics else "**no**")
    parts += ["## Evidence", "", f"eligible: {verdict}", ""]
    parts += [f"- {md_cell(reason)}" for reason in grouped_reasons(evidence, bench.n_samples)]
    for measurement, groups in document.slices.items():
        if groups:
            parts += ["", f"## {md_cell(measurement)} by group", ""]
            parts.append(markdown_table(["group", "value", "valid/total"], [
                [g, fmt(a.value), f"{a.n_valid}/{a.n_total}"] for g, a in groups.items()]))
    return "\n".join(parts).rstrip() + "\n"


def weak_signals(document: RunResults) -> list[str]:
    """Under the table: each measurement whose number cannot tell models apart, and why
    (:func:`wfeval.report.signals.flags`); nothing when there is none."""
    lines = [f"- ⚠ **{md_cell(measurement)}**: {md_cell(flag.label)} — {md_cell(flag.detail)}"
             for measurement, agg in document.results.items() for flag in flags(agg)]
    return ["Weak signals:", "", *lines, ""] if lines else []
