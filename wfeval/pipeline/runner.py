"""One evaluation run: build → generate (cached) → score → aggregate → write the run directory."""

from __future__ import annotations

import os
import platform
import sys
import time
import traceback
from dataclasses import dataclass, field
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any

from omegaconf import DictConfig

import wfeval
from wfeval._hashing import sha256_json
from wfeval.api import AggregateResult, GenerationRequest, GenerationResult, MetricResult
from wfeval.artifacts import ArtifactStore
from wfeval.config.errors import ConfigError
from wfeval.pipeline import build
from wfeval.pipeline.generate import GenerationCache, generate_all, model_key
from wfeval.pipeline.progress import Progress
from wfeval.pipeline.results import build_results, dataset_hash
from wfeval.pipeline.rundir import RUN_FORMAT_VERSION, RunDirectory, read_jsonl, utc_now
from wfeval.pipeline.score import score_all
from wfeval.report.markdown import results_markdown
from wfeval.report.table import evidence_line, results_table

KEY_PACKAGES = ("hydra-core", "omegaconf", "numpy", "scipy", "torch", "av")


@dataclass
class RunSummary:
    output_dir: Path
    results: dict[str, AggregateResult] = field(default_factory=dict)
    generated: int = 0
    cached: int = 0


def package_versions() -> dict[str, str | None]:
    """Versions of key packages, read from metadata (nothing heavy is imported)."""
    out: dict[str, str | None] = {"wfeval": wfeval.__version__, "python": platform.python_version()}
    for name in KEY_PACKAGES:
        try:
            out[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            out[name] = None
    return out


def seeds_of(node: Any, prefix: str = "") -> dict[str, Any]:
    """Every ``seed`` key of the resolved config, by its full key (``benchmark.seed``, ...)."""
    found: dict[str, Any] = {}
    if isinstance(node, dict):
        for key, value in node.items():
            path = f"{prefix}{key}"
            if key == "seed" and not isinstance(value, (dict, list)):
                found[path] = value
            else:
                found.update(seeds_of(value, path + "."))
    return found


def config_hash(plain_cfg: dict) -> str:
    identity = {k: v for k, v in plain_cfg.items() if k != "run"}
    identity["run"] = {k: v for k, v in plain_cfg.get("run", {}).items() if k in ("seed", "limit", "from_run")}
    return sha256_json(identity)


def _load_source_run(path: str) -> tuple[list[tuple[GenerationRequest, GenerationResult]], dict]:
    source = RunDirectory(Path(path).expanduser().resolve(), create=False)
    manifest = source.read_json("manifest.json")
    rows = list(read_jsonl(source.file("generations.jsonl")))
    if manifest is None or not rows:
        raise ConfigError(f"run.from_run: {source.path} is not a finished wfeval run "
                          "(needs manifest.json and generations.jsonl)")
    pairs = [(GenerationRequest.from_dict(r["request"]), GenerationResult.from_dict(r["result"])) for r in rows]
    return pairs, manifest


def run_from_config(cfg: DictConfig, output_dir: str | os.PathLike[str]) -> RunSummary:
    """Run the evaluation described by a composed config, writing into ``output_dir``."""
    plain = build.to_plain(cfg)
    rundir = RunDirectory(output_dir)
    chash = config_hash(plain)
    previous = rundir.read_json("manifest.json")
    if previous is not None and previous.get("config_hash") != chash:
        raise ConfigError(f"{rundir.path} holds a run of another config (hash {previous.get('config_hash')}); "
                          "resume it with its own overrides or use a new directory")
    resumed = previous is not None
    store = ArtifactStore(cfg.run.store_dir)
    manifest: dict[str, Any] = {
        "schema_version": RUN_FORMAT_VERSION,
        "run_id": rundir.path.name,
        "status": "running",
        "started_at": (previous or {}).get("started_at") or utc_now(),
        "finished_at": None,
        "config_hash": chash,
        "config_file": ".hydra/config.yaml",
        "argv": sys.argv,
        "cwd": os.getcwd(),
        "host": platform.node(),
        "seeds": seeds_of(plain),
        "versions": package_versions(),
        "store_dir": str(store.root),
        "resumed": resumed,
    }
    rundir.write_json("manifest.json", manifest)
    rundir.event("run_resumed" if resumed else "run_started", config_hash=chash)
    summary = RunSummary(output_dir=rundir.path)
    try:
        _execute(cfg, plain, rundir, store, manifest, summary)
    except BaseException as exc:
        manifest.update(status="interrupted" if isinstance(exc, KeyboardInterrupt) else "failed",
                        finished_at=utc_now(), error=f"{type(exc).__name__}: {exc}")
        rundir.write_json("manifest.json", manifest)
        rundir.event("run_failed", error=manifest["error"],
                     traceback="".join(traceback.format_exception(type(exc), exc, exc.__traceback__)))
        raise
    manifest.update(status="completed", finished_at=utc_now())
    rundir.write_json("manifest.json", manifest)
    rundir.event("run_finished", generated=summary.generated, cached=summary.cached)
    return summary


def _execute(cfg: DictConfig, plain: dict, rundir: RunDirectory, store: ArtifactStore,
             manifest: dict, summary: RunSummary) -> None:
    task = build.build_task(cfg)
    protocol = build.build_protocol(cfg)
    metrics = build.build_metrics(build.metric_nodes(cfg))
    progress_mode = cfg.run.progress
    if cfg.run.from_run:
        pairs, source = _load_source_run(cfg.run.from_run)
        benchmark_id = source["benchmark"]["id"]
        rules = source.get("rules", {})
        manifest.update(source_run=str(Path(cfg.run.from_run).resolve()), benchmark=source["benchmark"],
                        model=source["model"], rules=rules)
        rundir.event("generation_loaded", source=manifest["source_run"], samples=len(pairs))
        summary.cached = len(pairs)
    else:
        bench = build.build_benchmark(cfg)
        rules = build.benchmark_rules(cfg)
        benchmark_id = bench.spec.benchmark_id
        requests = list(bench.requests(store=store, task=task, protocol=protocol))
        if cfg.run.limit is not None:
            requests = requests[: cfg.run.limit]
        build.check_requests_fit_task(requests, task)
        model = build.build_model(cfg)
        version = str(getattr(model, "version", ""))
        mkey = model_key(plain["model"], version)
        manifest.update(
            benchmark={"id": benchmark_id, "version": bench.spec.version, "fingerprint": bench.fingerprint(),
                       "n_samples": len(requests), "dataset_hash": dataset_hash(requests),
                       "metrics": [m.id for m in bench.spec.metrics]},
            rules=rules,
            model={"name": getattr(model, "name", type(model).__name__), "version": version, "key": mkey,
                   "target": plain["model"].get("_target_")},
        )
        rundir.write_json("manifest.json", manifest)
        pairs = _generate(requests, model, GenerationCache(store, mkey), mkey, cfg, rundir, summary)
    manifest["metrics"] = {m_id: {"version": str(m.version), "class": f"{type(m).__module__}.{type(m).__qualname__}"}
                           for m_id, m in metrics.items()}
    rundir.write_json("manifest.json", manifest)
    rundir.write_jsonl("generations.jsonl", ({"request": q.to_dict(), "result": r.to_dict()} for q, r in pairs))
    per_metric = _score(metrics, pairs, rundir, progress_mode)
    rundir.event("phase_started", phase="aggregate")
    results, document = build_results(
        manifest=manifest, metrics=metrics, per_metric=per_metric, requests=[q for q, _ in pairs],
        rules=rules, required_metrics=manifest["benchmark"].get("metrics", ()),
    )
    rundir.write_jsonl("samples.jsonl", _sample_rows(pairs, per_metric, benchmark_id, rundir, manifest))
    rundir.write_json("results.json", document)
    rundir.write_text("results.md", results_markdown(document))
    rundir.event("phase_finished", phase="aggregate", results=len(results))
    summary.results = results
    print(results_table(results, title=f"{manifest['model']['name']} on {benchmark_id}  ({rundir.path})"))
    print(evidence_line(document["evidence"]))


def _generate(requests, model, cache, mkey, cfg, rundir, summary) -> list[tuple[GenerationRequest, GenerationResult]]:
    rundir.event("phase_started", phase="generate", samples=len(requests))
    progress = Progress("generate", len(requests), cfg.run.progress)

    def on_result(request: GenerationRequest, result: GenerationResult, cached: bool) -> None:
        if cached:
            summary.cached += 1
        else:
            summary.generated += 1
        rundir.append("steps.jsonl", {
            "time": utc_now(), "sample_id": request.sample_id, "step": 0, "phase": "generate",
            "cached": cached, "status": result.status, "latency_seconds": result.latency_seconds,
            "actions": result.steps, "error": result.error,
        })
        progress.update()

    setup = getattr(model, "setup", None)
    if callable(setup):
        setup()
    try:
        results = generate_all(requests, model, cache, mkey, batch_size=cfg.run.batch_size, on_result=on_result)
    finally:
        close = getattr(model, "close", None)
        if callable(close):
            close()
        progress.close()
    rundir.event("phase_finished", phase="generate", generated=summary.generated, cached=summary.cached,
                 failed=sum(r.status != "ok" for r in results))
    return list(zip(requests, results))


def _score(metrics, pairs, rundir: RunDirectory, progress_mode: str) -> dict[str, list[MetricResult]]:
    done = {}
    for row in read_jsonl(rundir.file("metrics.jsonl")):  # resuming the same run directory
        result = MetricResult.from_dict(row)
        done[(result.metric_id, result.sample_id)] = result
    rundir.event("phase_started", phase="score", metrics=list(metrics), reused=len(done))
    progress = Progress("score", len(metrics) * len(pairs), progress_mode)

    def on_result(result: MetricResult, reused: bool) -> None:
        if not reused:
            rundir.append("metrics.jsonl", result.to_dict())
        progress.update()

    started = time.perf_counter()
    per_metric = score_all(metrics, pairs, done=done, on_result=on_result)
    progress.close()
    rundir.event("phase_finished", phase="score", seconds=round(time.perf_counter() - started, 3))
    return per_metric


def _sample_rows(pairs, per_metric, benchmark_id: str, rundir: RunDirectory, manifest: dict):
    """One standard public row per sample (shared/seeds/004 fields that apply)."""
    status = {(m, r.sample_id): r.status for m, rows in per_metric.items() for r in rows}
    for request, result in pairs:
        yield {
            "task_id": request.task_id,
            "sample_id": request.sample_id,
            "benchmark": benchmark_id,
            "split": request.split,
            "prediction": {k: v.to_dict() for k, v in result.artifacts.items()},
            "success": result.status == "ok",
            "stop_reason": result.stop_reason or result.status,
            "steps": result.steps,
            "latency_seconds": result.latency_seconds,
            "token_usage": None,
            "cost": result.cost,
            "trace_run_dir": str(rundir.path),
            "run_spec_ref": f"manifest.json#config_hash={manifest['config_hash']}",
            "metadata": {
                "generation_status": result.status,
                "generation_error": result.error,
                "metric_status": {m: status[(m, request.sample_id)] for m in per_metric},
            },
        }
