"""The evidence gate: does a result meet what its benchmark declares it needs to count?

``evidence`` in a benchmark YAML::

    evidence:
      min_coverage: 0.95            # per metric: n_valid / n_total
      min_valid: {default: 8, fvd: 256}
      metric_versions: {psnr: "1.0"}
      dataset_hash: 3f2a...         # sha256 of the samples' content (manifest.benchmark.dataset_hash)
      official_splits: [test]

Every failed rule adds a reason; a result is eligible only with no reason at all.
"""

from __future__ import annotations

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
    """``results`` keyed by metric id; returns ``{"eligible", "reasons", "rules"}``."""
    reasons: list[str] = []
    for metric_id in required_metrics:
        if metric_id not in results:
            reasons.append(f"{metric_id}: required by the benchmark but not evaluated")
    min_coverage = float(rules.get("min_coverage") or 0.0)
    min_valid = dict(rules.get("min_valid") or {})
    for metric_id, agg in results.items():
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
    return {"eligible": not reasons, "reasons": reasons, "rules": dict(rules)}
