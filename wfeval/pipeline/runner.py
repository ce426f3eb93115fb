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
from wfeval.benchmarks.base import RunContext, apply_scorer, runtime_of
from wfeval.config.errors import ConfigError
from wfeval.pipeline import build
from wfeval.pipeline.generate import (
    GenerationCache,
    assign_seeds,
    failure_limit,
    generate_all,
    model_fingerprint,
    model_key,
    timeout_enforceable,
    verify_artifacts,
)
from wfeval.progress import Progress
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
    # run.shard is left out on purpose: every shard of a run shares the run's config hash
    identity["run"] = {k: v for k, v in plain_cfg.get("run", {}).items()
                       if k in ("seed", "limit", "from_run", "seed_mode", "verify_artifacts")}
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
    store = ArtifactStore(cfg.run.store_dir, durable=cfg.run.durable_store)
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
        "pid": os.getpid(),
        "seeds": seeds_of(plain),
        "versions": package_versions(),
        "store_dir": str(store.root),
        "resumed": resumed,
        "shard": cfg.run.shard,
    }
    rundir.write_json("manifest.json", manifest)
    rundir.event("run_resumed" if resumed else "run_started", config_hash=chash)
    summary = RunSummary(output_dir=rundir.path)
    try:
        _execute(cfg, plain, rundir, store, manifest, summary, previous)
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
             manifest: dict, summary: RunSummary, previous: dict | None = None) -> None:
    task = build.build_task(cfg)
    protocol = build.build_protocol(cfg)
    metrics = build.build_metrics(build.metric_nodes(cfg))
    progress_mode = cfg.run.progress
    if cfg.run.from_run:
        pairs, source = _load_source_run(cfg.run.from_run)
        benchmark_id = source["benchmark"]["id"]
        # the current config's rules when it names the source's benchmark (so a re-score can
        # apply a new scorecard or evidence rule), else the rules the source run recorded
        same = str(cfg.benchmark.get("name", "")) == benchmark_id
        rules = build.benchmark_rules(cfg) if same else source.get("rules", {})
        manifest.update(source_run=str(Path(cfg.run.from_run).resolve()), benchmark=source["benchmark"],
                        model=source["model"], rules=rules)
        rundir.event("generation_loaded", source=manifest["source_run"], samples=len(pairs))
        summary.cached = len(pairs)
    else:
        bench = build.build_benchmark(cfg)
        rules = build.benchmark_rules(cfg)
        benchmark_id = bench.spec.benchmark_id
        requests = build.select_requests(bench, store=store, task=task, protocol=protocol,
                                         limit=cfg.run.limit, shard=cfg.run.shard)
        build.check_requests_fit_task(requests, task)
        model = build.build_model(cfg)
        version = str(getattr(model, "version", ""))
        mfingerprint = model_fingerprint(model)
        mkey = model_key(plain["model"], version, mfingerprint)
        manifest.update(
            benchmark={"id": benchmark_id, "version": bench.spec.version, "fingerprint": bench.fingerprint(),
                       "n_samples": len(requests), "dataset_hash": dataset_hash(requests),
                       "metrics": [m.id for m in bench.spec.metrics]},
            rules=rules,
            model={"name": getattr(model, "name", type(model).__name__), "version": version, "key": mkey,
                   "target": plain["model"].get("_target_"), "fingerprint": mfingerprint},
        )
        rundir.write_json("manifest.json", manifest)
        pairs = _generate(requests, model, GenerationCache(store, mkey), mkey, cfg, rundir, summary,
                          bench=bench, manifest=manifest)
    if cfg.run.verify_artifacts:
        pairs = verify_artifacts(pairs, store)
        rundir.event("artifacts_verified", failed=sum(r.status == "failed" for _, r in pairs))
    manifest["metrics"] = {m_id: {"version": str(m.version), "class": f"{type(m).__module__}.{type(m).__qualname__}",
                                  "aggregator": getattr(m, "aggregator", None),
                                  "statistics": list(getattr(m, "statistics", ()) or ())}
                           for m_id, m in metrics.items()}
    rundir.write_json("manifest.json", manifest)
    records = [{"request": q.to_dict(), "result": r.to_dict()} for q, r in pairs]
    # rows of a resumed run are reused only for samples whose generation is the one they scored
    scored_before = {row["request"]["sample_id"]: row for row in read_jsonl(rundir.file("generations.jsonl"))}
    unchanged = {rec["request"]["sample_id"] for rec in records
                 if scored_before.get(rec["request"]["sample_id"]) == rec}
    rundir.write_jsonl("generations.jsonl", records)
    per_metric = _score(metrics, pairs, rundir, progress_mode, unchanged=unchanged,
                        versions_before={m: v.get("version") for m, v in (previous or {}).get("metrics", {}).items()})
    rundir.event("phase_started", phase="aggregate")
    results, document = build_results(
        manifest=manifest, metrics=metrics, per_metric=per_metric, requests=[q for q, _ in pairs],
        rules=rules, required_metrics=manifest["benchmark"].get("metrics", ()),
    )
    scorer = None if cfg.run.from_run else getattr(bench, "scorer", None)  # the family's row mapping
    rundir.write_jsonl("samples.jsonl", _sample_rows(pairs, per_metric, benchmark_id, rundir, manifest, scorer))
    rundir.write_json("results.json", document)
    rundir.write_text("results.md", results_markdown(document))
    rundir.event("phase_finished", phase="aggregate", results=len(results))
    summary.results = results
    print(results_table(results, title=f"{manifest['model']['name']} on {benchmark_id}  ({rundir.path})"))
    print(evidence_line(document["evidence"]))


def _generate(requests, model, cache, mkey, cfg, rundir, summary, *, bench=None,
              manifest=None) -> list[tuple[GenerationRequest, GenerationResult]]:
    """Seeds, the benchmark's runtime hook around generation, model setup/close, the controls."""
    try:
        requests = assign_seeds(requests, seed=cfg.run.seed, mode=cfg.run.seed_mode)
        failure_limit(cfg.run.fail_on_error, len(requests))
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    timeout_s = cfg.run.sample_timeout_s
    if timeout_s is not None and not timeout_s > 0:
        raise ConfigError(f"run.sample_timeout_s: expected a positive number of seconds or null, got {timeout_s}")
    hook = runtime_of(bench)
    context = RunContext(run_dir=rundir.path, store=cache.store, requests=requests, event=rundir.event)
    if hook is not None:
        info = hook.prepare(context)
        if info and manifest is not None:
            manifest["benchmark"]["runtime"] = dict(info)
            rundir.write_json("manifest.json", manifest)
    rundir.event("phase_started", phase="generate", samples=len(requests),
                 sample_timeout_s=timeout_s, sample_timeout_enforced=bool(timeout_s) and timeout_enforceable(),
                 fail_on_error=cfg.run.fail_on_error, seed_mode=cfg.run.seed_mode)
    progress = Progress("generate", len(requests), cfg.run.progress)

    def on_result(request: GenerationRequest, result: GenerationResult, cached: bool) -> None:
        if cached:
            summary.cached += 1
        else:
            summary.generated += 1
        step = {
            "time": utc_now(), "sample_id": request.sample_id, "step": 0, "phase": "generate",
            "cached": cached, "status": result.status, "latency_seconds": result.latency_seconds,
            "actions": result.steps, "error": result.error, "seed": request.generation.get("seed"),
        }
        for key in ("log", "attempts"):  # e.g. the command adapter's stderr tail and tries
            if key in result.metadata:
                step[key] = result.metadata[key]
        rundir.append("steps.jsonl", step)
        progress.update()

    status = "failed"
    try:
        setup = getattr(model, "setup", None)
        if callable(setup):
            setup()
        try:
            batch_size = getattr(model, "batch_size", None) or cfg.run.batch_size
            results = generate_all(requests, model, cache, mkey, batch_size=batch_size, on_result=on_result,
                                   sample_timeout_s=timeout_s, fail_on_error=cfg.run.fail_on_error)
            status = "completed"
        finally:
            close = getattr(model, "close", None)
            if callable(close):
                close()
            progress.close()
    finally:
        if hook is not None:
            done = hook.finalize(context, status=status)
            if done and manifest is not None:
                manifest["benchmark"].setdefault("runtime", {}).update(dict(done))
                rundir.write_json("manifest.json", manifest)
    counts = {s: sum(r.status == s for r in results) for s in ("failed", "not_generated")}
    rundir.event("phase_finished", phase="generate", generated=summary.generated, cached=summary.cached,
                 failed=counts["failed"], not_generated=counts["not_generated"],
                 timeouts=sum(r.stop_reason == "timeout" for r in results))
    return list(zip(requests, results))


def _score(metrics, pairs, rundir: RunDirectory, progress_mode: str, *, unchanged: set[str],
           versions_before: dict[str, Any]) -> dict[str, list[MetricResult]]:
    """Score every pair; a resumed run reuses its rows of unchanged samples and metric versions."""
    done = {}
    for row in read_jsonl(rundir.file("metrics.jsonl")):  # resuming the same run directory
        result = MetricResult.from_dict(row)
        metric = metrics.get(result.metric_id)
        if (result.sample_id in unchanged and metric is not None
                and versions_before.get(result.metric_id) == str(metric.version)):
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


def _sample_rows(pairs, per_metric, benchmark_id: str, rundir: RunDirectory, manifest: dict, scorer=None):
    """One standard public row per sample (shared/seeds/004 fields that apply)."""
    status = {(m, r.sample_id): r.status for m, rows in per_metric.items() for r in rows}
    for request, result in pairs:
        row = {
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
        yield apply_scorer(scorer, request, result, row)
