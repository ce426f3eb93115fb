"""One evaluation run, as a straight sequence: build → generate → score → results → write.

:func:`run_from_config` reads top to bottom: the recorder opens the run directory, the plan
holds every object the config describes (the requests spooled on disk), generation (or the
source run's generations) gives the (request, result) pairs, scoring gives the per-metric rows,
:func:`wfeval.results.build_results` gives the aggregates, and the run directory receives the
files. Samples flow through in chunks (:data:`wfeval.pipeline.spool.CHUNK`) and are written as
they go: what a run holds per sample is what results read (:mod:`wfeval.results.sample_table`).
"""

from __future__ import annotations

import contextlib
import errno
import functools
import os
from array import array
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable

from omegaconf import DictConfig

from wfeval.api import AggregateResult, GenerationRequest, GenerationResult
from wfeval.benchmarks.base import RunContext, runtime_of
from wfeval.config.errors import ConfigError
from wfeval.config.run_config import RunConfig, RunSettings
from wfeval.config.trust import check_config, locate_option_sources
from wfeval.pipeline import build, spool
from wfeval.pipeline.failure import ModelSetupError, storage_error, user_exit
from wfeval.pipeline.generate import generate_stream, timeout_enforceable, verify_pair
from wfeval.pipeline.lock import run_lock
from wfeval.pipeline.metric_nodes import with_metric_nodes
from wfeval.pipeline.nodes import record_config, to_plain
from wfeval.pipeline.overlap import Overlapped, overlap_unit
from wfeval.pipeline.plan import RunPlan, plan_run
from wfeval.pipeline.recorder import RunRecorder
from wfeval.pipeline.scoring import PARTIAL_GENERATIONS, PARTIAL_SAMPLES, score_after
from wfeval.pipeline.seeds import seeded_request
from wfeval.pipeline.spool import chunked
from wfeval.report.markdown import results_markdown
from wfeval.report.table import FailureTally, end_of_run
from wfeval.results import build_results
from wfeval.results.record import RunResults, write_results
from wfeval.storage.artifacts import ArtifactStore
from wfeval.storage.seal import event_sink
from wfeval.storage.generations import GenerationCache
from wfeval.storage.rundir import FILES, check_no_links, utc_now
from wfeval.utils.progress import Progress

Pairs = list[tuple[GenerationRequest, GenerationResult]]


@dataclass
class RunSummary:
    output_dir: Path
    results: dict[str, AggregateResult] = field(default_factory=dict)
    generated: int = 0
    cached: int = 0
    document: RunResults = field(default_factory=RunResults)  # what results.json holds


def run_from_config(cfg: DictConfig | RunConfig, output_dir: str | os.PathLike[str], *,
                    echo: bool = True) -> RunSummary:
    """Run the evaluation described by a composed config, writing into ``output_dir`` (which one
    process at a time may hold: :func:`wfeval.pipeline.lock.run_lock`); ``echo``: print the
    results table at the end."""
    config = cfg if isinstance(cfg, RunConfig) else RunConfig.resolve(cfg)  # checked before any file is written
    config = with_metric_nodes(config)  # a config composed elsewhere: its metrics selected here, once
    # code only from where the user chose it (docs/trust.md): the config with every metric node it scores
    check_config({**config.plain, "metric": {m: to_plain(n) for m, n in (config.metric_nodes or {}).items()}},
                 locate=lambda found: locate_option_sources(config.job.searchpath, found))
    with contextlib.ExitStack() as held:
        try:
            Path(output_dir).mkdir(parents=True, exist_ok=True)
            check_no_links(Path(output_dir))  # a run folder is data: never write through a link in it
            held.enter_context(run_lock(Path(output_dir)))
        except OSError as exc:
            raise storage_error(exc, "cannot use the run folder:" if exc.errno == errno.ELOOP
                                else "cannot create the run folder:") from None
        try:
            record_config(config, Path(output_dir))
            return _run(config, output_dir, echo)
        except SystemExit as exc:  # user code ending the process where no narrower place caught it
            raise user_exit(exc, "user code (a model, policy, metric or benchmark)") from None


def _run(config: RunConfig, output_dir: str | os.PathLike[str], echo: bool = True) -> RunSummary:
    run = config.run
    store = ArtifactStore(run.store_dir, durable=run.durable_store)
    try:
        recorder = RunRecorder.open(output_dir, plain_cfg=build.plain_identity(config.plain),
                                    store_dir=store.root, shard=run.shard)
    except OSError as exc:
        raise storage_error(exc, "cannot write the run folder:") from None
    store.seal.on_refused = event_sink(recorder.event)  # a store record refused: an event naming the file
    summary = RunSummary(output_dir=recorder.path)
    with recorder.running(), contextlib.ExitStack() as spools:
        plan = plan_run(config, store, spool_dir=recorder.path)
        spools.callback(close_metrics, plan.metrics, recorder.event)  # after the last sample is scored
        if plan.requests is not None:
            spools.callback(plan.requests.close)
        recorder.record_plan(**plan.manifest_entries())
        offsets = array("q")  # where each sample's record starts in generations.jsonl: what scoring reads
        verified = Verified(store if run.verify_artifacts else None)
        # run.overlap: a fresh run scores its finished samples on a thread while the model generates
        # (pipeline/overlap.py; started with generation); a resumed run reuses rows: it scores after
        overlap = run.overlap is not False and plan.source_pairs is None and recorder.previous is None
        overlapped: list[Overlapped] = []
        failed = FailureTally()  # why samples were not generated or not scored: printed under the table
        with recorder.rundir.writer(PARTIAL_GENERATIONS, truncate=True) as records:
            def keep(chunk: Pairs) -> None:  # each finished chunk of samples, in order
                start = len(offsets)
                for request, result in chunk:
                    result = verified(request, result)
                    failed.add(request.sample_id, result)
                    offsets.append(records.write({"request": request.to_dict(), "result": result.to_dict()}))
                records.flush()
                if overlap:
                    overlapped[0].submit(offsets[start:])

            def start_scoring() -> None:  # the generate phase has started: so has the scoring thread (or it
                # starts with the first unit, after the metrics' imports: pipeline/overlap.py). References known
                # now (not replayed after generation, as closed loop's are) are prepared beside generation
                early = plan.requests if plan.finalize is None else None
                overlapped.append(Overlapped(plan, recorder, run.progress, store, len(plan.requests), failed,
                                             requests=early, mode=run.overlap))

            if plan.source_pairs is not None:
                recorder.event("generation_loaded", source=plan.source_run, samples=len(plan.source_pairs))
                summary.cached = len(plan.source_pairs)
                for chunk in chunked(plan.source_pairs):
                    keep(chunk)
            else:
                try:
                    _generate(plan, run, store, recorder, summary, keep,
                              unit=overlap_unit(plan.model.batch_size or run.batch_size) if overlap else None,
                              started=start_scoring if overlap else None)
                except BaseException:
                    if overlapped:
                        overlapped[0].stop()
                    raise
        if run.verify_artifacts:
            recorder.event("artifacts_verified", failed=verified.failed)
        if overlap:
            recorder.rundir.replace(PARTIAL_GENERATIONS, FILES.generations)  # the scoring thread reads its own handle
            table = overlapped[0].finish()
        else:
            table = score_after(plan, offsets, recorder, run.progress, store, failed)
        recorder.event("phase_started", phase="aggregate")
        summary.results, summary.document = build_results(
            manifest=recorder.manifest, metrics=plan.metrics, table=table, rules=plan.rules,
            required_metrics=recorder.manifest.required_metrics,
        )
        recorder.rundir.replace(PARTIAL_SAMPLES, FILES.samples)
        write_results(recorder.rundir, summary.document)
        recorder.rundir.write_text(FILES.results_md, results_markdown(summary.document))
        recorder.event("phase_finished", phase="aggregate", results=len(summary.results))
        recorder.complete(generated=summary.generated, cached=summary.cached)
    if echo:
        print(end_of_run(summary.results, summary.document, f"{recorder.manifest.model_info.name} on "
                                                            f"{plan.benchmark_id}  ({recorder.path})", failed))
    if run.report:  # report.html; a failure is an event and a warning, never a failed run
        from wfeval.report.html import write_run_report
        write_run_report(recorder.path, event=recorder.event)
    return summary


def close_metrics(metrics: dict, event: Callable[..., None]) -> None:
    """Each metric's optional ``close()``, once, after the run's last sample is scored (also when the run
    fails): what a metric holds is let go (``pose_error``: its Memory Maze simulators, whose built
    episodes the next run in the process takes back). A metric whose ``close`` fails fails nothing: its
    rows are written; the event ``metric_close_failed`` names it."""
    for metric_id, metric in metrics.items():
        close = getattr(metric, "close", None)
        if callable(close):
            try:
                close()
            except Exception as exc:  # noqa: BLE001 - the scores are kept; the failure is recorded
                event("metric_close_failed", metric=metric_id, error=f"{type(exc).__name__}: {exc}")


class Verified:
    """``run.verify_artifacts``: each sample's files re-hashed (:func:`verify_pair`), failures counted."""

    def __init__(self, store: ArtifactStore | None):
        self.store, self.failed = store, 0

    def __call__(self, request: GenerationRequest, result: GenerationResult) -> GenerationResult:
        if self.store is not None:
            result = verify_pair(request, result, self.store)
            self.failed += result.status == "failed"
        return result


def _generate(plan: RunPlan, run: RunSettings, store: ArtifactStore, recorder: RunRecorder, summary: RunSummary,
              keep: Callable[[Pairs], None], unit: int | None = None,
              started: Callable[[], None] | None = None) -> None:
    """Seeds, the benchmark's runtime hook around generation, model setup/close, the controls;
    each chunk of finished samples (closed loop / planning: with the chosen actions replayed into
    the reference) goes to ``keep`` in order: chunks of ``unit`` samples (overlapped scoring), else
    :data:`~wfeval.pipeline.spool.CHUNK`; ``started`` is called once the model's setup has succeeded."""
    requests = plan.requests
    requests.apply = functools.partial(seeded_request, seed=run.seed, mode=run.seed_mode)  # as they are read
    timeout_s = run.sample_timeout_s
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
    counts = {"failed": 0, "not_generated": 0, "timeouts": 0}
    steps = recorder.rundir.writer(FILES.steps)

    def on_result(request: GenerationRequest, result: GenerationResult, cached: bool) -> None:
        summary.cached += cached
        summary.generated += not cached
        counts["failed"] += result.status == "failed"
        counts["not_generated"] += result.status == "not_generated"
        counts["timeouts"] += result.stop_reason == "timeout"
        step = {
            "time": utc_now(), "sample_id": request.sample_id, "step": 0, "phase": "generate",
            "cached": cached, "status": result.status, "latency_seconds": result.latency_seconds,
            "actions": result.steps, "error": result.error, "seed": request.generation.get("seed"),
        }
        for key in ("log", "attempts"):  # e.g. the command adapter's stderr tail and tries
            if key in result.metadata:
                step[key] = result.metadata[key]
        steps.write(step)
        for row in result.metadata.get("steps") or ():  # the protocol driver's per-call rows
            steps.write({"time": step["time"], "sample_id": request.sample_id, "phase": "step", "cached": cached,
                         **row})
        if not cached:  # a generated sample's rows reach the disk with it; cached ones with their chunk
            steps.flush()
        progress.update()

    status = "failed"
    try:
        try:
            model.setup()
        except (ConfigError, KeyboardInterrupt):
            raise
        except SystemExit as exc:
            raise user_exit(exc, f"model {model.name!r}: setup()") from None
        except Exception as exc:
            raise ModelSetupError(f"model {model.name!r}: setup() failed before any sample was generated: "
                                  f"{type(exc).__name__}: {exc}") from exc
        settled = model.settled()  # setup() may have loaded weights: the state is hashed again
        if settled.key != model.key:
            recorder.record_model(settled.manifest_entry())
            recorder.event("model_state_changed_by_setup", key_before=model.key, key=settled.key)
            model = settled
        if started is not None:  # after setup: the scoring thread never imports beside the model's setup
            started()
        try:
            cache = GenerationCache(store, model.key, on_event=recorder.event)
            stream = generate_stream(iter(requests), model, cache, model.key, total=len(requests),
                                     regenerate=run.regenerate,
                                     batch_size=model.batch_size or run.batch_size, on_result=on_result,
                                     sample_timeout_s=timeout_s, fail_on_error=run.fail_on_error,
                                     contract=plan.contract, window=spool.CHUNK)
            for chunk in chunked(stream, unit):
                steps.flush()
                keep(plan.finalize(chunk, store) if plan.finalize is not None else chunk)
            status = "completed"
        finally:
            steps.close()
            try:
                model.close()
            except SystemExit as exc:
                raise user_exit(exc, f"model {model.name!r}: close()") from None
            progress.close()
    finally:
        if hook is not None:
            recorder.record_runtime(hook.finalize(context, status=status))
    recorder.event("phase_finished", phase="generate", generated=summary.generated, cached=summary.cached, **counts)

