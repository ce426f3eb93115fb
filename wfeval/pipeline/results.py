"""results.json as a pure function of what a run stored: replaying a run rebuilds it exactly.

Inputs are the manifest, the metric objects (only their ``aggregate`` is called), the
per-sample MetricResults, the requests (for group slices) and the benchmark's rules
(``group_by``, ``scorecard``, ``evidence``).
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any, Mapping, Sequence

from wfeval._hashing import sha256_json
from wfeval.api import AggregateResult, GenerationRequest, MetricResult
from wfeval.pipeline.rundir import RUN_FORMAT_VERSION
from wfeval.pipeline.score import aggregate_one
from wfeval.report.evidence import evidence_gate
from wfeval.report.scorecard import scorecard
from wfeval.report.table import headline

RULE_KEYS = ("group_by", "scorecard", "evidence")


def dataset_hash(requests: Sequence[GenerationRequest]) -> str:
    """sha256 of the samples' content: ids, splits, input/reference checksums and controls."""
    return sha256_json([
        {
            "sample_id": r.sample_id,
            "split": r.split,
            "inputs": {k: v.sha256 for k, v in r.inputs.items()},
            "references": {k: v.sha256 for k, v in r.references.items()},
            "controls": r.to_dict()["controls"],
            "prompt": r.prompt,
        }
        for r in requests
    ])


def group_value(request: GenerationRequest, key: str) -> str:
    """``split``, ``task_id``, ``benchmark_id`` or ``metadata.<key>`` of a request, as text."""
    if key.startswith("metadata."):
        value: Any = request.metadata.get(key.removeprefix("metadata."))
    elif key in ("split", "task_id", "benchmark_id", "protocol"):
        value = getattr(request, key)
    else:
        raise ValueError(f"benchmark.group_by: unknown key {key!r}; use split, task_id, benchmark_id, "
                         "protocol or metadata.<key>")
    return "(none)" if value is None else str(value)


def slices(metrics: Mapping[str, Any], per_metric: Mapping[str, Sequence[MetricResult]],
           requests: Mapping[str, GenerationRequest], group_by: Sequence[str]) -> dict[str, dict]:
    """Per metric id, per ``key=value`` group: the metric's own aggregate over that group."""
    out: dict[str, dict] = {}
    for metric_id, rows in per_metric.items():
        groups: dict[str, dict[str, list[MetricResult]]] = {}
        for key in group_by:
            by_value: dict[str, list[MetricResult]] = defaultdict(list)
            for row in rows:
                by_value[group_value(requests[row.sample_id], key)].append(row)
            groups[key] = dict(sorted(by_value.items()))
        out[metric_id] = {f"{key}={value}": aggregate_one(metric_id, metrics[metric_id], subset).to_dict()
                          for key, values in groups.items() for value, subset in values.items()}
    return out


def build_results(
    *,
    manifest: Mapping[str, Any],
    metrics: Mapping[str, Any],
    per_metric: Mapping[str, Sequence[MetricResult]],
    requests: Sequence[GenerationRequest],
    rules: Mapping[str, Any],
    required_metrics: Sequence[str] = (),
) -> tuple[dict[str, AggregateResult], dict[str, Any]]:
    """The aggregates (keyed ``<benchmark_id>.<metric_id>``) and the results.json document."""
    # ``runtime`` says how this process got the data (recorded or cached, timings): not a result
    benchmark = {k: v for k, v in manifest["benchmark"].items() if k != "runtime"}
    ns = benchmark["id"]
    by_metric = {m: aggregate_one(m, metrics[m], rows) for m, rows in per_metric.items()}
    versions = {m: str(metrics[m].version) for m in metrics}
    directions = {m: getattr(metrics[m], "higher_is_better", None) for m in metrics}
    card = scorecard(rules.get("scorecard") or {}, {m: headline(a) if a.valid else None for m, a in by_metric.items()},
                     directions)
    splits = sorted({r.split for r in requests})
    evidence = evidence_gate(
        rules.get("evidence") or {}, results=by_metric, metric_versions=versions,
        dataset_hash=benchmark.get("dataset_hash"), split=splits[0] if len(splits) == 1 else ",".join(splits),
        required_metrics=required_metrics,
    )
    by_id = {r.sample_id: r for r in requests}
    document = {
        "schema_version": RUN_FORMAT_VERSION,
        "run_id": manifest["run_id"],
        "config_hash": manifest["config_hash"],
        "benchmark": benchmark,
        "model": manifest["model"],
        "metrics": {f"{ns}.{m}": {"version": versions[m], "higher_is_better": directions[m]} for m in metrics},
        "results": {f"{ns}.{m}": a.to_dict() for m, a in by_metric.items()},
        "slices": {f"{ns}.{m}": s for m, s in slices(metrics, per_metric, by_id, rules.get("group_by") or ()).items()},
        "scorecard": card,
        "evidence": evidence,
    }
    return {f"{ns}.{m}": a for m, a in by_metric.items()}, document
