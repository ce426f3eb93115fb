"""A run's report in Markdown: measurements, scorecard, evidence and group slices."""

from __future__ import annotations

from typing import Any

from wfeval.report.numbers import HYPHEN, fmt
from wfeval.report.escape import markdown_table, md_cell
from wfeval.report.rows import rows
from wfeval.report.units import with_unit
from wfeval.results import headline
from wfeval.results.evidence import grouped_reasons


def results_markdown(document: dict[str, Any]) -> str:
    model, bench = document["model"]["name"], document["benchmark"]["id"]
    parts = [f"# {md_cell(model)} on {md_cell(bench)}", "",
             f"run `{md_cell(document['run_id'])}` · config `{md_cell(str(document['config_hash'])[:12])}` · "
             f"dataset `{md_cell(str(document['benchmark'].get('dataset_hash'))[:12])}` · "
             f"{md_cell(document['benchmark'].get('n_samples', '?'))} samples", ""]
    body = [[r["measurement"], with_unit(fmt(r["value"]), r["unit"]),
             f"[{fmt(r['ci_low'])}, {fmt(r['ci_high'])}]" if r["ci_method"] else HYPHEN,
             r["ci_method"] or HYPHEN, f"{r['n_valid']}/{r['n_total']}", str(r["n_skipped"])] for r in rows(document)]
    parts += [markdown_table(["measurement", "value", "CI", "CI method", "valid/total", "skipped"], body), ""]
    card = document.get("scorecard") or {}
    if card.get("components"):
        parts += ["## Scorecard", "", f"overall: **{md_cell(fmt(card['score']))}**"
                  + (f" (missing: {md_cell(', '.join(card['missing']))}; partial {fmt(card['partial_score'])})"
                     if card["missing"] else ""), ""]
        parts.append(markdown_table(["metric", "value", "normalized", "weight"], [
            [m, fmt(c["value"]), fmt(c["normalized"]) if not c.get("missing") else "missing", fmt(c["weight"])]
            for m, c in card["components"].items()]))
        parts.append("")
    evidence = document.get("evidence") or {}
    verdict = "**yes**" if evidence.get("eligible") else (
        f"**not assessed** (metrics {md_cell(', '.join(evidence['missing_metrics']))} missing)"
        if evidence.get("missing_metrics") else "**no**")
    parts += ["## Evidence", "", f"eligible: {verdict}", ""]
    parts += [f"- {md_cell(reason)}" for reason in grouped_reasons(evidence, document["benchmark"].get("n_samples"))]
    for measurement, groups in (document.get("slices") or {}).items():
        if groups:
            parts += ["", f"## {md_cell(measurement)} by group", ""]
            parts.append(markdown_table(["group", "value", "valid/total"], [
                [g, fmt(headline(a)), f"{a['n_valid']}/{a['n_total']}"] for g, a in groups.items()]))
    return "\n".join(parts).rstrip() + "\n"
