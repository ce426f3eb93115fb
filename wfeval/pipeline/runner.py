"""One evaluation run, as a straight sequence: build → generate → score → results → write.

:func:`run_from_config` reads top to bottom: the recorder opens the run directory, the plan
holds every object the config describes, generation (or the source run's generations) gives
the (request, result) pairs, scoring gives the per-metric rows, :func:`wfeval.results.build_results`
gives the aggregates, and the run directory receives the files.
"""

from __future__ import annotations

import contextlib
import os
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Sequence

from omegaconf import DictConfig

from wfeval.api import AggregateResult, GenerationRequest, GenerationResult, MetricResult
from wfeval.artifacts import ArtifactStore
from wfeval.benchmarks.base import RunContext, apply_scorer, runtime_of
from wfeval.config.errors import ConfigError
from wfeval.config.trust import check_config
from wfeval.pipeline import build
from wfeval.pipeline.generate import GenerationCache, failure_limit, generate_all, timeout_enforceable, verify_artifacts
from wfeval.pipeline.failure import ModelSetupError, storage_error
from wfeval.pipeline.lock import run_lock
from wfeval.pipeline.plan import RunPlan, plan_run
from wfeval.pipeline.recorder import RunRecorder
from wfeval.pipeline.score import reusable_rows, score_all
from wfeval.result_cache import ResultCache
from wfeval.pipeline.seeds import assign_seeds
from wfeval.progress import Progress
from wfeval.report.markdown import results_markdown
from wfeval.report.table import evidence_line, results_table
from wfeval.results import build_results
from wfeval.rundir import utc_now

Pairs = list[tuple[GenerationRequest, GenerationResult]]


@dataclass
class RunSummary:
    output_dir: Path
    results: dict[str, AggregateResult] = field(default_factory=dict)
    generated: int = 0
    cached: int = 0


def run_from_config(cfg: DictConfig, output_dir: str | os.PathLike[str]) -> RunSummary:
    """Run the evaluation described by a composed config, writing into ``output_dir`` (which one
    process at a time may hold: :func:`wfeval.pipeline.lock.run_lock`)."""
    check_config(build.to_plain(cfg))  # code only from where the user chose it (wfeval/config/trust.py)
    with contextlib.ExitStack() as held:
        try:
            Path(output_dir).mkdir(parents=True, exist_ok=True)
            held.enter_context(run_lock(Path(output_dir)))
        except OSError as exc:
            raise storage_error(exc, "cannot create the run folder:") from None
        return _run(cfg, output_dir)


def _run(cfg: DictConfig, output_dir: str | os.PathLike[str]) -> RunSummary:
    store = ArtifactStore(cfg.run.store_dir, durable=cfg.run.durable_store)
    try:
        recorder = RunRecorder.open(output_dir, plain_cfg=build.plain_identity(build.to_plain(cfg)),
                                    store_dir=store.root, shard=cfg.run.shard)
    except OSError as exc:
        raise storage_error(exc, "cannot write the run folder:") from None
    summary = RunSummary(output_dir=recorder.path)
    with recorder.running():
        plan = plan_run(cfg, store)
        recorder.record_plan(**plan.manifest_entries())
        if plan.source_pairs is not None:
            recorder.event("generation_loaded", source=plan.source_run, samples=len(plan.source_pairs))
            pairs, summary.cached = plan.source_pairs, len(plan.source_pairs)
        else:
            pairs = _generate(plan, cfg.run, store, recorder, summary)
            if plan.finalize is not None:  # closed loop / planning: the chosen actions replayed into the reference
                pairs = plan.finalize(pairs, store)
        if cfg.run.verify_artifacts:
            pairs = verify_artifacts(pairs, store)
            recorder.event("artifacts_verified", failed=sum(r.status == "failed" for _, r in pairs))
        per_metric = _score(plan, pairs, recorder, cfg.run.progress, store)
        recorder.event("phase_started", phase="aggregate")
        summary.results, document = build_results(
            manifest=recorder.manifest, metrics=plan.metrics, per_metric=per_metric,
            requests=[q for q, _ in pairs], rules=plan.rules, aggregation=plan.metrics.aggregation,
            required_metrics=recorder.manifest["benchmark"].get("metrics", ()),
        )
        _write(plan, pairs, per_metric, document, recorder)
        recorder.event("phase_finished", phase="aggregate", results=len(summary.results))
        recorder.complete(generated=summary.generated, cached=summary.cached)
    print(results_table(summary.results, title=f"{recorder.manifest['model']['name']} on {plan.benchmark_id}  "
                                               f"({recorder.path})"))
    print(evidence_line(document["evidence"]))
    if cfg.run.report:  # report.html; a failure is an event and a warning, never a failed run
        from wfeval.report.html import write_run_report
        write_run_report(recorder.path, event=recorder.event)
    return summary


def _generate(plan: RunPlan, run: Any, store: ArtifactStore, recorder: RunRecorder, summary: RunSummary) -> Pairs:
    """Seeds, the benchmark's runtime hook around generation, model setup/close, the controls."""
    try:
        requests = assign_seeds(plan.requests, seed=run.seed, mode=run.seed_mode)
        failure_limit(run.fail_on_error, len(requests))
    except ValueError as exc:
        raise ConfigError(str(exc)) from exc
    if run.batch_size is None or run.batch_size < 1:
        raise ConfigError(f"run.batch_size: expected a positive number of samples per batch, got {run.batch_size}")
    timeout_s = run.sample_timeout_s
    if timeout_s is not None and not timeout_s > 0:
        raise ConfigError(f"run.sample_timeout_s: expected a positive number of seconds or null, got {timeout_s}")
    model = plan.model
    hook = runtime_of(plan.benchmark)
    context = RunContext(run_dir=recorder.path, store=store, requests=requests, event=recorder.event)
    if hook is not None:
        recorder.record_runtime(hook.prepare(context))
    recorder.event("phase_started", phase="generate", samples=len(requests), sample_timeout_s=timeout_s,
                   sample_timeout_enforced=bool(timeout_s) and timeout_enforceable(),
                   fail_on_error=run.fail_on_error, seed_mode=run.seed_mode,
                   output_contract=plan.contract.describe() if plan.contract else None)
    progress = Progress("generate", len(requests), run.progress)

    def on_result(request: GenerationRequest, result: GenerationResult, cached: bool) -> None:
        summary.cached += cached
        summary.generated += not cached
        step = {
            "time": utc_now(), "sample_id": request.sample_id, "step": 0, "phase": "generate",
            "cached": cached, "status": result.status, "latency_seconds": result.latency_seconds,
            "actions": result.steps, "error": result.error, "seed": request.generation.get("seed"),
        }
        for key in ("log", "attempts"):  # e.g. the command adapter's stderr tail and tries
            if key in result.metadata:
                step[key] = result.metadata[key]
        recorder.step(step)
        for row in result.metadata.get("steps") or ():  # the protocol driver's per-call rows
            recorder.step({"time": step["time"], "sample_id": request.sample_id, "phase": "step", "cached": cached,
                           **row})
        progress.update()

    status = "failed"
    try:
        try:
            model.setup()
        except (ConfigError, KeyboardInterrupt):
            raise
        except Exception as exc:
            raise ModelSetupError(f"model {model.name!r}: setup() failed before any sample was generated: "
                                  f"{type(exc).__name__}: {exc}") from exc
        try:
            cache = GenerationCache(store, model.key, on_event=recorder.event)
            results = generate_all(requests, model, cache, model.key,
                                   batch_size=model.batch_size or run.batch_size, on_result=on_result,
                                   sample_timeout_s=timeout_s, fail_on_error=run.fail_on_error,
                                   contract=plan.contract)
            status = "completed"
        finally:
            model.close()
            progress.close()
    finally:
        if hook is not None:
            recorder.record_runtime(hook.finalize(context, status=status))
    recorder.event("phase_finished", phase="generate", generated=summary.generated, cached=summary.cached,
                   failed=sum(r.status == "failed" for r in results),
                   not_generated=sum(r.status == "not_generated" for r in results),
                   timeouts=sum(r.stop_reason == "timeout" for r in results))
    return list(zip(requests, results))


def _score(plan: RunPlan, pairs: Pairs, recorder: RunRecorder, progress_mode: str,
           store: ArtifactStore | None = None) -> dict[str, list[MetricResult]]:
    """Score every pair; a resumed run reuses its rows of unchanged samples and metric versions."""
    records = [{"request": q.to_dict(), "result": r.to_dict()} for q, r in pairs]
    done = reusable_rows(recorder.rundir, plan.metrics, records, recorder.previous)
    recorder.rundir.write_jsonl("generations.jsonl", records)
    recorder.event("phase_started", phase="score", metrics=list(plan.metrics), reused=len(done))
    progress = Progress("score", len(plan.metrics) * len(pairs), progress_mode)

    def on_result(result: MetricResult, reused: bool) -> None:
        if not reused:
            recorder.rundir.append("metrics.jsonl", result.to_dict())
        progress.update()

    started = time.perf_counter()
    cache = ResultCache(store.root) if store is not None else None  # metric rows by content (wfeval.result_cache)
    per_metric = score_all(plan.metrics, pairs, done=done, on_result=on_result, cache=cache)
    progress.close()
    recorder.event("phase_finished", phase="score", seconds=round(time.perf_counter() - started, 3),
                   **({"result_cache": {"hits": cache.hits, "misses": cache.misses}} if cache is not None else {}))
    return per_metric


def _write(plan: RunPlan, pairs: Sequence[tuple[GenerationRequest, GenerationResult]],
           per_metric: dict[str, list[MetricResult]], document: dict, recorder: RunRecorder) -> None:
    rundir = recorder.rundir
    rundir.write_jsonl("samples.jsonl", sample_rows(pairs, per_metric, plan, recorder))
    rundir.write_json("results.json", document)
    rundir.write_text("results.md", results_markdown(document))


def sample_rows(pairs, per_metric: dict[str, list[MetricResult]], plan: RunPlan, recorder: RunRecorder):
    """One standard public row per sample (the shared result-row contract's fields that apply)."""
    status = {(m, r.sample_id): r.status for m, rows in per_metric.items() for r in rows}
    for request, result in pairs:
        row = {
            "task_id": request.task_id,
            "sample_id": request.sample_id,
            "benchmark": plan.benchmark_id,
            "split": request.split,
            "prediction": {k: v.to_dict() for k, v in result.artifacts.items()},
            "success": result.status == "ok",
            "stop_reason": result.stop_reason or result.status,
            "steps": result.steps,
            "latency_seconds": result.latency_seconds,
            "token_usage": None,
            "cost": result.cost,
            "trace_run_dir": str(recorder.path),
            "run_spec_ref": f"manifest.json#config_hash={recorder.manifest['config_hash']}",
            "metadata": {
                "generation_status": result.status,
                "generation_error": result.error,
                "metric_status": {m: status[(m, request.sample_id)] for m in per_metric},
            },
        }
        yield apply_scorer(plan.scorer, request, result, row)
