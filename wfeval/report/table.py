"""The compact results table printed at the end of a run, the eligibility line and why samples failed."""

from __future__ import annotations

from collections import Counter
from typing import Mapping

from wfeval.api import AggregateResult
from wfeval.report.numbers import HYPHEN, fmt
from wfeval.report.probes import levels_note, shown_value
from wfeval.report.signals import label as weak_signals
from wfeval.report.units import with_unit
from wfeval.results import headline
from wfeval.results.evidence import grouped_reasons
from wfeval.results.record import Evidence, RunResults

MAX_REASONS = 3  # distinct failure reasons printed for the model, and for the metrics
REASON_WIDTH = 200
#: below this many samples on either side a distribution metric (FVD: Fréchet distance of features)
#: is flagged in the table: biased upwards at small N and its ranking can flip (docs/metrics.md)
SMALL_N = 256


def _anonymous(text: str, sample_id: str) -> str:
    """``text`` with the sample's id taken out: the same reason on other samples reads the same."""
    for form in (repr(sample_id), f'"{sample_id}"', sample_id):
        text = text.replace(form, "…")
    return text


class FailureTally:
    """Why samples were not generated (reason, the sample's id taken out → count, a first sample),
    and why metrics did not score items (reason → metric → count), as a run goes."""

    def __init__(self) -> None:
        self.counts: Counter = Counter()
        self.example: dict[str, str] = {}
        self.metric_reasons: dict[str, Counter] = {}

    def add(self, sample_id: str, result) -> None:
        if result.status == "ok":
            return
        reason = f"{result.stop_reason or result.status}: " \
                 f"{_anonymous(_first_line(result.error) or 'no error message', sample_id)}"
        self.counts[reason] += 1
        self.example.setdefault(reason, sample_id)

    def add_metric(self, result) -> None:
        """A metric row; a skip or error that does not merely follow a failed generation is counted."""
        if result.status not in ("skip", "error"):
            return
        category = str((result.diagnostics or {}).get("skip_category") or "")
        reason = _first_line(result.skip_reason) or "no reason given"
        if "(generation " in category or "(generation " in reason or category.startswith("input unavailable") \
                or reason == "not generated":
            return
        self.metric_reasons.setdefault(_anonymous(reason, result.sample_id), Counter())[result.metric_id] += 1


def _clip(text: str, width: int) -> str:
    return text if len(text) <= width else text[: width - 1] + "…"


def results_table(results: Mapping[str, AggregateResult], title: str = "",
                  units: Mapping[str, str] | None = None) -> str:
    """One line per measurement: value (with its unit), interval, counts, why items were not scored.
    ``units``: measurement → short unit (:func:`wfeval.report.units.short_unit`)."""
    units = units or {}
    rows = [("measurement", "value", "95% CI", "valid/total", "skipped", "note")]
    for key, agg in results.items():
        ci = agg.confidence_interval
        interval = f"[{fmt(ci.get('low'))}, {fmt(ci.get('high'))}]" if ci else HYPHEN
        note = "" if agg.valid else str(agg.diagnostics.get("reason", "invalid"))
        if agg.valid and isinstance(agg.diagnostics.get("ceiling"), float):  # idm_accuracy: what it reads against
            chance = agg.diagnostics.get("chance")
            note = f"IDM ceiling {fmt(agg.diagnostics['ceiling'])}, chance {fmt(chance)}"
        if agg.valid and levels_note(agg.diagnostics):  # a probe: chance, ceiling, effective rank
            note = levels_note(agg.diagnostics)
        warning = distribution_warning(agg.diagnostics) if agg.valid else ""
        weak = weak_signals(agg)  # an IDM too weak, a value at chance: first, before anything is cut
        if weak:
            warning = f"{weak}; {warning}" if warning else weak
        if warning:  # beside the value, first: a distribution metric at small N ranks unreliably
            note = f"{warning}; {note}" if note else warning
        if agg.skip_breakdown and agg.valid:
            skips = "; ".join(f"{n}× {reason}" for reason, n in agg.skip_breakdown.items())
            note = f"{note}; {skips}" if note else skips
        elif agg.skip_breakdown:
            note = next(iter(agg.skip_breakdown))
        covered = f"{agg.n_valid}/{agg.n_total}"
        if agg.n_total and agg.n_valid < agg.n_total:  # the value rests on part of the samples: say how much
            covered += f" ({agg.n_valid / agg.n_total:.0%})"
        value = shown_value(agg.diagnostics, with_unit(fmt(headline(agg)), units.get(key, ""))) if agg.valid else "n/a"
        rows.append((key, value, interval, covered, str(agg.n_skipped), _clip(note, 70)))
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]) - 1)]
    lines = [("  ".join(c.ljust(w) for c, w in zip(r[:-1], widths)) + "  " + r[-1]).rstrip() for r in rows]
    lines.insert(1, "-" * max(len(line) for line in lines))
    return ("\n".join([title, *lines]) if title else "\n".join(lines)).rstrip()


def distribution_warning(diagnostics: Mapping[str, object]) -> str:
    """The table's warning for a distribution metric (diagnostics with ``n_generated``/``n_real``) at
    small N: the covariance rank-deficient (N ≤ feature dimension) or fewer than :data:`SMALL_N`."""
    n_gen, n_real = diagnostics.get("n_generated"), diagnostics.get("n_real")
    if not isinstance(n_gen, int):
        return ""
    n = min(n_gen, n_real) if isinstance(n_real, int) else n_gen
    if diagnostics.get("rank_deficient"):
        return f"⚠ small N={n} ≤ dim {diagnostics.get('feature_dim', '?')}: rank-deficient, compare at equal N"
    if n < SMALL_N:
        return f"⚠ small N={n} < {SMALL_N}: biased, compare only at equal N"
    return ""


def evidence_line(evidence: Evidence | Mapping[str, object], n_samples: int | None = None,
                  explicit: bool = True) -> str:
    """One line saying whether the result counts for the benchmark, and why not (reasons grouped:
    :func:`wfeval.results.evidence.grouped_reasons`); a run on part of the measures its evidence needs
    is not assessed (``missing_metrics``), which says so rather than a bare "no", and how to assess
    it: without ``metric=[...]`` when the run was given one (``explicit``), else with the missing
    measures added."""
    if not isinstance(evidence, Evidence):
        evidence = Evidence.from_dict(evidence)
    if evidence.eligible:
        return "eligible: yes (meets the benchmark's evidence rules)"
    reasons = grouped_reasons(evidence, n_samples)
    missing = list(evidence.missing_metrics or [])
    if missing:
        others = [r for r in reasons if not r.endswith(" but not evaluated")]
        by_task = bool((evidence.rules or {}).get("measures"))
        needs = "the task's evidence needs them" if by_task else \
            "the benchmark's evidence rules cover its whole metric suite"
        advice = "run without metric=[...]" if explicit else f"add them with extra_metrics=[{','.join(missing)}]"
        return (f"eligible: not assessed for eligibility: metrics {', '.join(missing)} missing ({needs}: "
                f"{advice} to assess)" + (f"; also: {'; '.join(others)}" if others else ""))
    return f"eligible: no ({len(reasons)} reason{'s' if len(reasons) != 1 else ''}): " + "; ".join(reasons)


def _first_line(text: object) -> str:
    lines = [line.strip() for line in str(text or "").strip().splitlines() if line.strip()]
    if not lines:
        return ""
    # a traceback's last line says what happened; otherwise the first line does
    return lines[-1] if lines[0].startswith("Traceback") else lines[0]


def failure_lines(generation: FailureTally, results: Mapping[str, AggregateResult], n_samples: int,
                  limit: int = MAX_REASONS) -> list[str]:
    """Why samples were not scored, under the table: the first ``limit`` distinct reasons the model
    failed for (``generation``: reason → samples) and those the metrics skipped or errored for
    (each aggregate's ``skip_breakdown``; metrics that fail for the same reason share a line), with
    counts. Reasons that only repeat a failed generation are left out of the metrics' lines.
    Empty when every sample was generated and scored."""
    lines = []
    failed = sum(generation.counts.values())
    if failed:
        lines.append(f"model: {failed} of {n_samples} samples failed (every metric skips them or scores "
                     "them as failed):")
        for reason, count in generation.counts.most_common(limit):
            lines.append(f"  {count}× {_clip(reason, REASON_WIDTH)} (e.g. {generation.example[reason]})")
        if len(generation.counts) > limit:
            lines.append(f"  … {len(generation.counts) - limit} more reasons (samples.jsonl, report.html)")
    by_reason: dict[str, list[tuple[str, int]]] = {}
    if generation.metric_reasons:  # the rows' own reasons, seen as they were scored
        for reason, metrics in generation.metric_reasons.items():
            by_reason[reason] = list(metrics.items())
    else:  # only the aggregates: their skip categories
        for measurement, agg in results.items():
            for reason, count in (agg.skip_breakdown or {}).items():
                if "(generation " in reason or reason in ("not generated", "input unavailable (benchmark data problem)"):
                    continue  # follows from a failed generation (said above) or from the benchmark's data
                by_reason.setdefault(str(reason), []).append((measurement.split(".", 1)[-1], count))
    if by_reason:
        lines.append("metrics: items not scored (skip / error):")
        ordered = sorted(by_reason.items(), key=lambda kv: -sum(c for _, c in kv[1]))
        for reason, where in ordered[:limit]:
            counts = {c for _, c in where}
            names = ", ".join(m for m, _ in where)
            count = f"{counts.pop()}×" if len(counts) == 1 else "/".join(str(c) for _, c in where) + "×"
            lines.append(f"  {names}: {count} {_clip(_first_line(reason), REASON_WIDTH)}")
        if len(ordered) > limit:
            lines.append(f"  … {len(ordered) - limit} more reasons (metrics.jsonl, report.html)")
    return lines


def end_of_run(results: Mapping[str, AggregateResult], document: RunResults, title: str,
               generation: FailureTally) -> str:
    """What a run prints when it ends: the table (units from the document), why samples failed,
    the eligibility line."""
    from wfeval.report.units import unit_of

    units = {m: unit_of(document, m) for m in results}
    n_samples = int(document.benchmark.n_samples or max((a.n_total for a in results.values()), default=0))
    lines = [results_table(results, title=title, units=units),
             *failure_lines(generation, results, n_samples),
             evidence_line(document.evidence, n_samples,
                           explicit="metric" in (document.metric_selection or {}).values())]
    return "\n".join(lines)
