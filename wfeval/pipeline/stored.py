"""Read a run back from its files: its generations, metric rows, requests and metric objects.

Used by ``run.from_run`` (re-score stored generations), replay (rebuild results), merge
(combine shards) and anything else that must work from stored files alone, without calling a
model or scoring a sample again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

from wfeval.api import GenerationRequest, GenerationResult, MetricResult
from wfeval.metrics.rebuild import MetricRecordError, build_metric_from_record
from wfeval.results import MetricSet, resolve_aggregation
from wfeval.rundir import RunDirectory, read_jsonl


class StoredRunError(ValueError):
    """A run directory lacks what is needed to read it back."""


def load_generations(run_dir: Path) -> tuple[Sequence[tuple[GenerationRequest, GenerationResult]], dict]:
    """The (request, result) pairs of a run (read lazily from its ``generations.jsonl``) and its
    manifest (``run.from_run``)."""
    from wfeval.pipeline.spool import stored_pairs

    source = RunDirectory(run_dir, create=False)
    manifest = source.read_json("manifest.json")
    pairs = stored_pairs(source.file("generations.jsonl"))
    if manifest is None or not len(pairs):
        raise StoredRunError(f"run.from_run: {source.path} is not a finished wfeval run "
                             "(needs manifest.json and generations.jsonl)")
    return pairs, manifest


def load_run(run_dir: Path):
    """(manifest, metrics (a :class:`~wfeval.results.MetricSet`), per-metric rows in run order,
    requests) of a finished run."""
    from omegaconf import OmegaConf


    rundir = RunDirectory(run_dir, create=False)
    manifest = rundir.read_json("manifest.json")
    config = run_dir / ".hydra" / "config.yaml"
    if manifest is None or not config.is_file() or not rundir.file("metrics.jsonl").is_file():
        raise StoredRunError(f"{run_dir} is not a wfeval run directory "
                             "(needs manifest.json, .hydra/config.yaml and metrics.jsonl)")
    try:
        cfg = OmegaConf.load(config)  # read as data: its targets are registry keys, never imported
    except Exception as exc:
        from wfeval.config.errors import yaml_error_message

        raise StoredRunError(f"{run_dir}: {yaml_error_message(exc) or f'cannot read {config}: {exc}'}") from None
    metric_ids = list(manifest.get("metrics") or {})
    metrics = _rebuild_metrics(run_dir, cfg, manifest, metric_ids)
    requests = [GenerationRequest.from_dict(row["request"]) for row in read_jsonl(rundir.file("generations.jsonl"))]
    latest: dict[tuple[str, str], MetricResult] = {}
    for row in read_jsonl(rundir.file("metrics.jsonl")):
        result = MetricResult.from_dict(row)
        latest[(result.metric_id, result.sample_id)] = result
    per_metric = {}
    for m in metric_ids:
        missing = [r.sample_id for r in requests if (m, r.sample_id) not in latest]
        if missing:
            raise StoredRunError(f"{run_dir}: metrics.jsonl has no {m!r} row for {len(missing)} sample(s), "
                                 f"e.g. {missing[0]!r}: the run did not finish scoring")
        per_metric[m] = [latest[(m, r.sample_id)] for r in requests]
    return manifest, metrics, per_metric, requests


def _rebuild_metrics(run_dir: Path, cfg, manifest: dict, metric_ids: list[str]) -> MetricSet:
    """The run's metrics through the registry (never a target from the folder), with the
    aggregation the run recorded for each."""
    from wfeval.pipeline.build import to_plain

    metrics, aggregation = {}, {}
    try:
        for m in metric_ids:
            node = to_plain(cfg.metric[m]) if m in cfg.get("metric", {}) else _extra_node(m)
            metrics[m] = build_metric_from_record(m, node, target=(manifest["metrics"][m] or {}).get("class"))
            try:
                aggregation[m] = resolve_aggregation(metrics[m], node.get("aggregation"))
            except ValueError as exc:
                raise MetricRecordError(f"metric {m!r}: aggregation: {exc}") from None
    except MetricRecordError as exc:
        raise StoredRunError(f"{run_dir}: {exc}") from None
    return MetricSet(metrics, aggregation)


def _extra_node(metric_id: str) -> dict:
    """The packaged config of a metric the run added with ``extra_metrics`` (its options are wfeval's)."""
    from wfeval.config import ConfigError
    from wfeval.pipeline.build import compose_metric_nodes, to_plain

    try:  # the command (replay, merge) has registered the config schemas
        return to_plain(compose_metric_nodes([metric_id])[metric_id])
    except ConfigError as exc:
        raise MetricRecordError(str(exc)) from None
