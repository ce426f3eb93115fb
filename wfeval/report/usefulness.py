"""Which metric predicts usefulness? Across the models of a sweep (or any set of runs), the rank
correlation of every quality measure with the usefulness measures — ``goal_success`` (planning
inside the model, acting in the true world) and ``policy_rank_correlation`` (the model as a policy
evaluator). "Pretty but useless" made visible: a measure that ranks the models unlike their
usefulness has a low or negative correlation.

A model is joined across runs of different tasks by its name and its resolved config (the run's
``.hydra/config.yaml`` ``model`` section; the name alone when a run has none). Each measure is keyed
``<protocol>:<benchmark>.<metric>`` (the same metric under two protocols measures two things).
Every measure with a declared direction is a candidate, oriented so that its better end counts as
higher, except the usefulness measures themselves and what is not about quality (``generated_rate``,
``artifact_count``, latency, real-time factor, the planning and policy-evaluation measures). Per
(measure, usefulness) pair: Spearman's ρ over the models that have both (at least 3), with a
percentile bootstrap interval over models; undefined (None) when either side does not vary.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import numpy as np

from wfeval.results.record import Aggregate, RunResults
from wfeval.storage.rundir import FILES

TARGETS = ("goal_success", "policy_rank_correlation")
NOT_QUALITY_GROUPS = ("interactive", "planning", "policy_evaluation", "exploitability", "policy_optimization")
NOT_QUALITY_IDS = ("generated_rate", "artifact_count")
MIN_MODELS = 3


@dataclass
class UsefulnessTable:
    models: list[str]
    targets: list[str]  # measure keys of the usefulness measures found
    rows: list[dict[str, Any]] = field(default_factory=list)  # target, measure, rho, low, high, n

    def __bool__(self) -> bool:
        return bool(self.rows)


def _model_config(run_dir: str | None) -> Any:
    if not run_dir:
        return None
    path = Path(run_dir) / FILES.config
    if not path.is_file():
        return None
    try:
        from wfeval.utils.yaml_data import load_yaml

        model = load_yaml(path.read_text(encoding="utf-8")).get("model")
        return model if isinstance(model, dict) else None
    except Exception:  # noqa: BLE001 - an unreadable config: join by name only
        return None


def _groups() -> dict[str, tuple[str, ...]]:
    from wfeval.metrics.selection import metric_groups

    out: dict[str, list[str]] = {}
    for group, ids in metric_groups().items():
        for metric_id in ids:
            out.setdefault(metric_id, []).append(group)
    return {k: tuple(v) for k, v in out.items()}


def _is_quality(metric_id: str, groups: Mapping[str, Sequence[str]]) -> bool:
    return metric_id not in TARGETS and metric_id not in NOT_QUALITY_IDS and not (
        set(groups.get(metric_id, ())) & set(NOT_QUALITY_GROUPS))


def collect(documents: Iterable[RunResults], run_dirs: Iterable[Any] | None = None,
            ) -> tuple[dict[str, dict[str, Any]], dict[str, bool | None]]:
    """(model key -> {"label", "values": {measure key: value}}, measure key -> higher is better);
    ``run_dirs``: each document's run folder (its recorded model config tells models apart)."""
    from itertools import repeat

    models: dict[str, dict[str, Any]] = {}
    directions: dict[str, bool | None] = {}
    for doc, run_dir in zip(documents, repeat(None) if run_dirs is None else run_dirs):
        name = doc.model_name
        config = _model_config(None if run_dir is None else str(run_dir))
        digest = hashlib.sha256(json.dumps(config, sort_keys=True, default=str).encode()).hexdigest()[:8]
        key = name if config is None else f"{name}/{digest}"
        entry = models.setdefault(key, {"name": name, "values": {}})
        protocol = doc.protocol.label  # the label the leaderboards use
        for measurement, agg in doc.results.items():
            value = agg.value if isinstance(agg, Aggregate) else None
            if value is None:
                continue
            key_m = f"{protocol}:{measurement}"
            entry["values"][key_m] = float(value)
            directions[key_m] = doc.info(measurement).higher_is_better
    names = [m["name"] for m in models.values()]
    for key, entry in models.items():  # one label per model; the config hash only where names repeat
        entry["label"] = entry["name"] if names.count(entry["name"]) == 1 else key
    return models, directions


def usefulness(documents: Iterable[RunResults], *, run_dirs: Iterable[Any] | None = None,
               n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0) -> UsefulnessTable:
    from wfeval.functional.ranking import spearman

    models, directions = collect(documents, run_dirs)
    if len(models) < MIN_MODELS:  # no measure can be correlated (a single run's report): nothing to import
        return UsefulnessTable(models=[e["label"] for e in models.values()], targets=[])
    groups = _groups()
    keys = sorted({m for entry in models.values() for m in entry["values"]})
    targets = [k for k in keys if k.rsplit(".", 1)[-1] in TARGETS]
    candidates = [k for k in keys if k not in targets and directions.get(k) is not None
                  and _is_quality(k.rsplit(".", 1)[-1], groups)]
    table = UsefulnessTable(models=[e["label"] for e in models.values()], targets=targets)
    rng = np.random.default_rng(seed)
    for target in targets:
        for measure in candidates:
            both = [(e["values"][measure], e["values"][target], e["label"]) for e in models.values()
                    if measure in e["values"] and target in e["values"]]
            if len(both) < MIN_MODELS:
                continue
            sign = 1.0 if directions[measure] else -1.0
            x = np.array([sign * b[0] for b in both])
            y = np.array([b[1] for b in both])
            if np.ptp(x) == 0 or np.ptp(y) == 0:
                rho, low, high = None, None, None
            else:
                rho = spearman(x, y)
                draws = np.array([spearman(x[i], y[i]) for i in (rng.integers(0, len(x), len(x))
                                                                  for _ in range(n_resamples))])
                # a resample in which one side does not vary has no correlation (NaN): left out, never
                # counted as 0 (with few models that pulled every interval down to 0); the interval is
                # given only when most resamples have one
                draws = draws[~np.isnan(draws)]
                alpha = (1 - confidence) / 2
                low, high = (float(np.quantile(draws, alpha)), float(np.quantile(draws, 1 - alpha))) \
                    if len(draws) >= n_resamples / 2 else (None, None)
            table.rows.append({"target": target, "measure": measure, "rho": rho, "low": low, "high": high,
                               "n": len(both), "models": [b[2] for b in both]})
    table.rows.sort(key=lambda r: (table.targets.index(r["target"]), -(r["rho"] if r["rho"] is not None else -2)))
    return table


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:+.2f}"


def table_rows(table: UsefulnessTable) -> tuple[list[str], list[list[str]]]:
    header = ["usefulness", "measure", "Spearman ρ", "95% CI (bootstrap over models)", "models"]
    body = [[r["target"], r["measure"], _fmt(r["rho"]),
             "-" if r["low"] is None else f"[{_fmt(r['low'])}, {_fmt(r['high'])}]", str(r["n"])] for r in table.rows]
    return header, body


LEGEND = ("ρ: Spearman rank correlation across models between the measure (oriented: its better end is "
          "higher) and the usefulness measure; n/a: one side does not vary; a low or negative ρ is a measure "
          "that ranks the models unlike their usefulness (\"pretty but useless\")")


def render_text(table: UsefulnessTable) -> str:
    from wfeval.report.escape import plain

    header, body = table_rows(table)
    body = [[plain(c) for c in row] for row in body]
    widths = [max(len(r[i]) for r in [header, *body]) for i in range(len(header))]
    line = lambda r: "  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip()  # noqa: E731
    return "\n".join(["which measure predicts usefulness (across models: " + plain(", ".join(table.models)) + ")",
                      line(header), "-" * sum(w + 2 for w in widths), *map(line, body), "", LEGEND])


def write_usefulness(table: UsefulnessTable, folder: Path) -> tuple[Path, Path]:
    """``<folder>/usefulness.md`` (with the legend) and ``usefulness.csv``."""
    from wfeval.report.escape import csv_text, markdown_table, md_inline
    from wfeval.storage.outputs import write_output

    header, body = table_rows(table)
    md, sheet = folder / FILES.usefulness_md, folder / FILES.usefulness_csv
    return (write_output(md, f"models: {md_inline(', '.join(table.models))}\n\n" + markdown_table(header, body)
                         + f"\n\n{md_inline(LEGEND)}\n"),
            write_output(sheet, csv_text(header, body)))


def section(documents: Iterable[RunResults], run_dirs: Iterable[Any] | None = None) -> dict[str, Any] | None:
    """What the HTML report shows (None when no usefulness measure has enough models)."""
    table = usefulness(documents, run_dirs=run_dirs)
    if not table:
        return None
    header, body = table_rows(table)
    return {"header": header, "rows": body, "models": table.models, "legend": LEGEND}
