"""One overall score from a benchmark's declared components (weights, direction, normalizer).

``scorecard`` in a benchmark YAML::

    scorecard:
      primary: psnr                      # the metric leaderboards sort by
      components:
        psnr: {weight: 1.0, normalizer: minmax, low: 10.0, high: 50.0}
        fvd:  {weight: 1.0, normalizer: zscore, mean: 300.0, std: 100.0, higher_is_better: false}

Normalizers: ``minmax`` maps ``low..high`` to 0..1 (clipped), ``zscore`` gives
``(value - mean) / std``, ``identity`` keeps the value; each is flipped for lower-is-better
metrics (``1 - x`` for minmax, ``-x`` otherwise) so that higher is always better. A missing or
invalid component is reported as missing, and the overall score is then ``None`` (a partial
score over the present components is given separately), never a silent 0.
"""

from __future__ import annotations

from typing import Any, Mapping

NORMALIZERS = ("minmax", "zscore", "identity")


def normalize(value: float, spec: Mapping[str, Any], higher_is_better: bool | None) -> float:
    kind = spec.get("normalizer", "identity")
    if kind == "minmax":
        low, high = spec.get("low"), spec.get("high")
        if low is None or high is None or high == low:
            raise ValueError("minmax normalizer needs anchors low != high")
        x = min(max((value - low) / (high - low), 0.0), 1.0)
        return x if higher_is_better is not False else 1.0 - x
    if kind == "zscore":
        mean, std = spec.get("mean"), spec.get("std")
        if mean is None or not std:
            raise ValueError("zscore normalizer needs mean and a non-zero std")
        z = (value - mean) / std
        return z if higher_is_better is not False else -z
    if kind == "identity":
        return value if higher_is_better is not False else -value
    raise ValueError(f"unknown normalizer {kind!r}; use one of {', '.join(NORMALIZERS)}")


def scorecard(
    spec: Mapping[str, Any], headline: Mapping[str, float | None], directions: Mapping[str, bool | None]
) -> dict[str, Any]:
    """``headline``: metric id → its aggregate value (None when invalid or absent)."""
    components = spec.get("components") or {}
    rows: dict[str, Any] = {}
    missing = []
    for metric_id, comp in components.items():
        value = headline.get(metric_id)
        direction = comp.get("higher_is_better")
        direction = directions.get(metric_id) if direction is None else direction
        weight = float(comp.get("weight", 1.0))
        if value is None:
            missing.append(metric_id)
            rows[metric_id] = {"value": None, "normalized": None, "weight": weight, "missing": True}
            continue
        rows[metric_id] = {"value": value, "normalized": normalize(float(value), comp, direction), "weight": weight,
                           "normalizer": comp.get("normalizer", "identity"), "higher_is_better": direction}
    present = [r for r in rows.values() if r["normalized"] is not None]
    total = sum(r["weight"] for r in present)
    partial = sum(r["weight"] * r["normalized"] for r in present) / total if total > 0 else None
    return {
        "primary": spec.get("primary"),
        "score": None if missing or not components else partial,
        "partial_score": partial,
        "missing": missing,
        "components": rows,
    }
