"""A measurement broken down: per state variable and per horizon, from a run's metric rows.

What the results API (:class:`wfeval.results.measurements.Results`) exposes beside the headline:

- **per variable** — a probing measurement (``probe_r2``, ``probe_accuracy``, ``imagined_probe_r2_k<k>``)
  scores each state variable on each sample (the row's ``components``: variable → score); a
  variable's value is its mean over the measurement's valid samples;
- **per horizon** — a measurement that keeps a curve in its rows (``components``: :data:`CURVE_KEYS`,
  e.g. PSNR's ``per_frame``) gives, per frame, the mean over its valid samples; a measurement asked
  for by its base name whose run holds it at several horizons (``imagined_probe_r2`` →
  ``imagined_probe_r2_k1``, ``_k4`` …) gives each horizon's headline value.

The rows are ``metrics.jsonl``'s, the last row of a sample winning (as everywhere); only rows
whose status is ``ok`` count, as in the aggregate.
"""

from __future__ import annotations

import math
import re
from pathlib import Path
from typing import Any, Callable, Iterator, Mapping

#: a row's curve: component key → (x of item i, what x means); the report's horizon charts read the same
CURVE_KEYS: tuple[tuple[str, Callable[[dict, int], int], str], ...] = (
    ("per_frame", lambda c, i: int(c.get("first_frame") or 0) + i, "frame"),
    ("per_step", lambda c, i: i + 1, "frame (change from the previous one)"),
    ("per_frame_error_px", lambda c, i: i, "frame"),
)
NOT_VARIABLES = ("chance", "left_out")  # probing components that are not a variable's score
PER_VARIABLE_FAMILIES = ("probing",)  # measurements whose row components are one score per state variable
HORIZON = re.compile(r"_k(\d+)$")


def _finite(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        return None
    return float(value)


def scored_rows(run_dir: str | Path, metric_id: str) -> Iterator[dict[str, Any]]:
    """The valid rows of ``metric_id`` (the last row of each sample), in the order samples first appear."""
    from wfeval.storage.rundir import FILES, read_jsonl

    path = Path(run_dir) / FILES.metrics
    if not path.is_file():
        return
    last: dict[str, dict[str, Any]] = {}
    for row in read_jsonl(path):
        if isinstance(row, dict) and row.get("metric_id") == metric_id and isinstance(row.get("sample_id"), str):
            last[row["sample_id"]] = row
    for row in last.values():
        if (row.get("diagnostics") or {}).get("status") == "ok":
            yield row


def _means(values: Mapping[Any, list[float]]) -> dict[Any, float]:
    return {k: sum(v) / len(v) for k, v in values.items() if v}


def per_variable(run_dir: str | Path, metric_id: str) -> dict[str, float]:
    """Each state variable's mean score over the valid samples of ``metric_id`` (empty when its rows
    keep no per-variable scores)."""
    values: dict[str, list[float]] = {}
    for row in scored_rows(run_dir, metric_id):
        for name, value in (row.get("components") or {}).items():
            if name not in NOT_VARIABLES and (v := _finite(value)) is not None:
                values.setdefault(str(name), []).append(v)
    return dict(sorted(_means(values).items()))


def per_frame(run_dir: str | Path, metric_id: str) -> dict[int, float]:
    """The mean curve of ``metric_id`` over its valid samples (frame → mean; empty without a curve)."""
    values: dict[int, list[float]] = {}
    for row in scored_rows(run_dir, metric_id):
        components = row.get("components") or {}
        for key, x_of, _ in CURVE_KEYS:
            series = components.get(key)
            if isinstance(series, list) and series:
                for i, value in enumerate(series):
                    if (v := _finite(value)) is not None:
                        values.setdefault(x_of(components, i), []).append(v)
                break
    return dict(sorted(_means(values).items()))


def horizons(measurements: Mapping[str, Any], base: str) -> dict[int, str]:
    """The measurements of ``base`` at each horizon (``<base>_k<k>``): k → measurement id."""
    found = {}
    for measurement in measurements:
        if measurement.startswith(f"{base}_k") and (match := HORIZON.search(measurement)):
            found[int(match.group(1))] = measurement
    return dict(sorted(found.items()))
