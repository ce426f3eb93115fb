"""The evidence gate: does a result meet what its benchmark declares it needs to count?

``evidence`` in a benchmark YAML::

    evidence:
      min_coverage: 0.95            # per metric: n_valid / n_total
      min_valid: {default: 8, fvd: 256}
      metric_versions: {psnr: "1.0"}
      dataset_hash: 3f2a...         # sha256 of the samples' content (manifest.benchmark.dataset_hash)
      official_splits: [test]

Every failed rule adds a reason; a result is eligible only with no reason at all. A run on part of
the benchmark's metrics is not assessed: ``missing_metrics`` names what is missing (the printed
line says "not assessed for eligibility", not a bare "no"). A task that
builds other samples from the benchmark's data pins their hash itself, and a task whose evidence
rests on its own measures (probes, goal success: ``FamilyNeed.evidence`` in ``wfeval/tasks/``)
names them as the rules' ``measures``, checked in place of the benchmark's suite (:func:`for_task`);
the run's other measures are shown and never block it. The reasons
are one per rule and metric (``results.json`` keeps them so); :func:`grouped_reasons` is how
they are shown: one line per distinct reason with the metrics it applies to, and a quick run on
a subset of the samples as one reason.
"""

from __future__ import annotations

import re
from typing import Any, Mapping, Sequence

from wfeval.api import AggregateResult


def evidence_gate(
    rules: Mapping[str, Any],
    *,
    results: Mapping[str, AggregateResult],
    metric_versions: Mapping[str, str],
    dataset_hash: str | None,
    split: str | None,
    required_metrics: Sequence[str],
) -> dict[str, Any]:
    """``results`` keyed by metric id; returns ``{"eligible", "reasons", "rules"}``. ``required_metrics``:
    the benchmark's suite, unless the rules name the task's ``measures``."""
    reasons: list[str] = []
    measures = [str(m) for m in rules.get("measures") or ()]
    required, by = (measures, "the task") if measures else (list(required_metrics), "the benchmark")
    for metric_id in required:
        if metric_id not in results:
            reasons.append(f"{metric_id}: required by {by} but not evaluated")
    min_coverage = float(rules.get("min_coverage") or 0.0)
    min_valid = dict(rules.get("min_valid") or {})
    for metric_id, agg in results.items():
        if measures and metric_id not in measures:
            continue  # shown beside the task's own measures, not part of its evidence
        if not agg.valid:
            reasons.append(f"{metric_id}: no valid result ({agg.diagnostics.get('reason', 'invalid')})")
            continue
        coverage = agg.n_valid / agg.n_total if agg.n_total else 0.0
        if coverage < min_coverage:
            reasons.append(f"{metric_id}: coverage {coverage:.3f} < required {min_coverage:.3f}")
        needed = min_valid.get(metric_id, min_valid.get("default", 0))
        if agg.n_valid < needed:
            reasons.append(f"{metric_id}: {agg.n_valid} valid samples < required {needed}")
    for metric_id, pinned in (rules.get("metric_versions") or {}).items():
        actual = metric_versions.get(metric_id)
        if actual is not None and str(actual) != str(pinned):
            reasons.append(f"{metric_id}: version {actual} differs from the pinned {pinned}")
    pinned_hash = rules.get("dataset_hash")
    if pinned_hash and dataset_hash != pinned_hash:
        reasons.append(f"dataset hash {str(dataset_hash)[:12]}… differs from the pinned {str(pinned_hash)[:12]}… "
                       "(other samples, a subset, or changed data)")
    splits = list(rules.get("official_splits") or [])
    if splits and split not in splits:
        reasons.append(f"split {split!r} is not an official split ({', '.join(splits)})")
    out = {"eligible": not reasons, "reasons": reasons, "rules": dict(rules)}
    missing = [m for m in required if m not in results]
    if missing:  # a run on part of the suite: not assessed (never eligible), said as such
        out["missing_metrics"] = missing
    return out


def for_task(rules: Mapping[str, Any], task: Mapping[str, Any] | None, benchmark: str | None,
             measures: Sequence[str] = ()) -> dict[str, Any]:
    """The evidence rules a run of ``task`` on ``benchmark`` is held to: a task that builds other
    samples from a benchmark's data (goal reaching) pins their hash itself
    (``task.metadata.dataset_hash.<benchmark name>``), which replaces the benchmark's
    ``dataset_hash``; ``measures``: the task's own evidence (``FamilyNeed.evidence``), recorded as the
    rules' ``measures``; every other rule is the benchmark's."""
    out = dict(rules)
    if measures:
        out["measures"] = list(measures)
    pinned = (((task or {}).get("metadata") or {}).get("dataset_hash") or {})
    if isinstance(pinned, Mapping) and benchmark is not None and benchmark in pinned:
        out["dataset_hash"] = pinned[benchmark]
    return out


_METRIC_REASON = re.compile(r"^([A-Za-z0-9_.\-]+): (.+)$")
_TOO_FEW = re.compile(r"^(\d+) valid samples < required (\d+)$")


def grouped_reasons(evidence: "Evidence | Mapping[str, Any]", n_samples: int | None = None) -> list[str]:
    """The reasons of an evidence verdict as shown to a person: reasons that differ only in their
    metric become one line (``psnr, ssim: 8 valid samples < required 32``), and a run on fewer
    samples than the pinned dataset (``benchmark.num_samples`` / ``run.limit``: every sample
    valid, just too few, and the dataset hash differs) is one reason that says so."""
    from wfeval.results.record import Evidence

    listed = evidence.reasons if isinstance(evidence, Evidence) else evidence.get("reasons")
    reasons = [str(r) for r in listed or []]
    groups: dict[str, list[str]] = {}
    others: list[str] = []
    for reason in reasons:
        match = _METRIC_REASON.match(reason)
        if match and " " not in match.group(1):
            groups.setdefault(match.group(2), []).append(match.group(1))
        else:
            others.append(reason)
    hash_reason = next((r for r in others if r.startswith("dataset hash ")), None)
    few = {text: _TOO_FEW.match(text) for text in groups}
    subset = [text for text, m in few.items() if m and n_samples is not None and int(m.group(1)) == n_samples]
    lines = []
    if hash_reason is not None and subset:
        needed = max(int(few[t].group(2)) for t in subset)  # type: ignore[union-attr]
        lines.append(f"a quick run on a subset: {n_samples} samples, not the benchmark's pinned dataset "
                     f"(≥ {needed} valid samples per metric); evaluate every sample (without "
                     "benchmark.num_samples / run.limit) for an eligible result")
        others.remove(hash_reason)
        for text in subset:
            del groups[text]
    lines += [f"{', '.join(metrics)}: {text}" for text, metrics in groups.items()]
    return lines + others
