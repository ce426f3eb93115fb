"""Read a run back from its files: its generations, metric rows, requests and metric objects.

Used by ``run.from_run`` (re-score stored generations), replay (rebuild results), merge
(combine shards) and anything else that must work from stored files alone, without calling a
model or scoring a sample again.
"""

from __future__ import annotations

from pathlib import Path

from wfeval.api import GenerationRequest, GenerationResult, MetricResult
from wfeval.rundir import RunDirectory, read_jsonl


class StoredRunError(ValueError):
    """A run directory lacks what is needed to read it back."""


def load_generations(run_dir: Path) -> tuple[list[tuple[GenerationRequest, GenerationResult]], dict]:
    """The (request, result) pairs of a run and its manifest (``run.from_run``)."""
    source = RunDirectory(run_dir, create=False)
    manifest = source.read_json("manifest.json")
    rows = list(read_jsonl(source.file("generations.jsonl")))
    if manifest is None or not rows:
        raise StoredRunError(f"run.from_run: {source.path} is not a finished wfeval run "
                             "(needs manifest.json and generations.jsonl)")
    pairs = [(GenerationRequest.from_dict(r["request"]), GenerationResult.from_dict(r["result"])) for r in rows]
    return pairs, manifest


def load_run(run_dir: Path):
    """(manifest, metrics (a :class:`~wfeval.results.MetricSet`), per-metric rows in run order,
    requests) of a finished run."""
    from omegaconf import OmegaConf

    from wfeval.pipeline import build

    rundir = RunDirectory(run_dir, create=False)
    manifest = rundir.read_json("manifest.json")
    config = run_dir / ".hydra" / "config.yaml"
    if manifest is None or not config.is_file() or not rundir.file("metrics.jsonl").is_file():
        raise StoredRunError(f"{run_dir} is not a wfeval run directory "
                             "(needs manifest.json, .hydra/config.yaml and metrics.jsonl)")
    cfg = OmegaConf.load(config)
    metric_ids = list(manifest.get("metrics") or {})
    metrics = build.build_metrics({m: cfg.metric[m] if m in cfg.metric else _extra_node(m) for m in metric_ids})
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


def _extra_node(metric_id: str):
    from wfeval.pipeline.build import compose_metric_nodes

    return compose_metric_nodes([metric_id])[metric_id]
