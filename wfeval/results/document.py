"""results.json as a pure function of what a run stored: replaying a run rebuilds it exactly.

Inputs are the manifest, the metric objects (only their ``aggregate`` is called) with the
aggregation chosen for each, the per-sample MetricResults, the requests (for group slices) and
the benchmark's rules (``group_by``, ``scorecard``, ``evidence``). A run, ``run.from_run``,
``replay``, ``merge`` and ``resume`` all build their results with :func:`build_results`.
"""

from __future__ import annotations

import hashlib
from typing import Any, Iterable, Mapping, Sequence

from wfeval.api import AggregateResult, GenerationRequest, MetricResult
from wfeval.metrics.ladder import rung_of
from wfeval.results.aggregation import Aggregation, headline
from wfeval.results.evidence import evidence_gate
from wfeval.results.record import RunManifest, RunResults
from wfeval.results.sample_table import ResultTable
from wfeval.results.scorecard import scorecard
from wfeval.storage.rundir import RUN_FORMAT_VERSION
from wfeval.utils.hashing import canonical_json

RULE_KEYS = ("group_by", "scorecard", "evidence")
"""Keys of a benchmark config that are evaluation rules read by the core, never by the adapter."""


def _hash_entry(r: GenerationRequest) -> dict[str, Any]:
    return {
        "sample_id": r.sample_id,
        "split": r.split,
        "inputs": {k: v.sha256 for k, v in r.inputs.items()},
        "references": {k: v.sha256 for k, v in r.references.items()},
        "controls": r.to_dict()["controls"],
        "prompt": r.prompt,
    }


class DatasetHash:
    """:func:`dataset_hash` fed one request at a time (the same digest, nothing held)."""

    def __init__(self) -> None:
        self._sha = hashlib.sha256(b"[")
        self.n = 0

    def add(self, request: GenerationRequest) -> None:
        self._sha.update(((b"," if self.n else b"") + canonical_json(_hash_entry(request)).encode("utf-8")))
        self.n += 1

    def hexdigest(self) -> str:
        sha = self._sha.copy()
        sha.update(b"]")
        return sha.hexdigest()


def dataset_hash(requests: Iterable[GenerationRequest]) -> str:
    """sha256 of the samples' content: ids, splits, input/reference checksums and controls."""
    digest = DatasetHash()
    for request in requests:
        digest.add(request)
    return digest.hexdigest()


def display_fields(metric: Any, measurement: str | None = None) -> dict[str, Any]:
    """What a reader needs to show a metric's values: its unit, the range of a per-sample value
    (``bounds``, with this run's options: PSNR's ``max_db``), its family (which pictures
    explain it) and the decision-ladder rung it is evidence for (:func:`wfeval.metrics.ladder.rung_of`).
    Absent for a metric that declares none of them."""
    out: dict[str, Any] = {}
    unit = getattr(metric, "output_unit", None)
    if isinstance(unit, str) and unit:
        out["unit"] = unit
    bounds = getattr(metric, "bounds", None)
    if isinstance(bounds, (tuple, list)) and len(bounds) == 2 and any(b is not None for b in bounds):
        out["bounds"] = [None if b is None else float(b) for b in bounds]
    family = getattr(metric, "family", None)
    if isinstance(family, str) and family:
        out["family"] = family
    rung = rung_of(measurement or str(getattr(metric, "name", "") or ""), metric)
    if rung is not None:
        out["rung"] = rung
    return out


def build_results(
    *,
    manifest: RunManifest | Mapping[str, Any],
    metrics: Mapping[str, Any],
    per_metric: Mapping[str, Sequence[MetricResult]] | None = None,
    requests: Sequence[GenerationRequest] = (),
    rules: Mapping[str, Any],
    aggregation: Mapping[str, Aggregation | None] | None = None,
    required_metrics: Sequence[str] = (),
    table: ResultTable | None = None,
) -> tuple[dict[str, AggregateResult], RunResults]:
    """The aggregates (keyed ``<benchmark_id>.<metric_id>``) and the run's results (results.json).

    The samples come as lists (``per_metric`` rows and ``requests``) or as the
    :class:`~wfeval.results.sample_table.ResultTable` a streaming run filled; both give the same document."""
    if not isinstance(manifest, RunManifest):
        manifest = RunManifest.from_dict(manifest)
    if table is None:
        table = ResultTable.of_rows(metrics, per_metric or {}, requests, rules.get("group_by") or (), aggregation)
    # ``runtime`` says how this process got the data (recorded or cached, timings): not a result
    benchmark = {k: v for k, v in manifest.benchmark_info.to_dict().items() if k != "runtime"}
    ns = benchmark["id"]
    by_metric = {m: table.aggregate(m) for m in table.ids}
    versions = {m: str(metrics[m].version) for m in metrics}
    directions = {m: getattr(metrics[m], "higher_is_better", None) for m in metrics}
    card = scorecard(rules.get("scorecard") or {}, {m: headline(a) for m, a in by_metric.items()}, directions)
    splits = sorted(table.splits)
    evidence = evidence_gate(
        rules.get("evidence") or {}, results=by_metric, metric_versions=versions,
        dataset_hash=benchmark.get("dataset_hash"), split=splits[0] if len(splits) == 1 else ",".join(splits),
        required_metrics=required_metrics,
    )
    group_slices = table.slices()
    selection = dict(manifest.metric_selection or {})
    document = {
        "schema_version": RUN_FORMAT_VERSION,
        "run_id": manifest.run_id,
        "config_hash": manifest.config_hash,
        "benchmark": benchmark,
        "model": manifest.model_info.to_dict(),
        "protocol": manifest.protocol_info.to_dict(),
        "metrics": {f"{ns}.{m}": {"version": versions[m], "higher_is_better": directions[m],
                                  **({"selected_by": selection[m]} if m in selection else {}),
                                  **display_fields(metrics[m], m)} for m in metrics},
        "metric_selection": selection,
        "results": {f"{ns}.{m}": a.to_dict() for m, a in by_metric.items()},
        "slices": {f"{ns}.{m}": s for m, s in group_slices.items()},
        "scorecard": card,
        "evidence": evidence,
    }
    return {f"{ns}.{m}": a for m, a in by_metric.items()}, RunResults.from_dict(document)
