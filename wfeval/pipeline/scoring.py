"""A run's scoring phase: one :class:`Scoring` fed chunks of (request, result) pairs in sample order.

Scoring reads the run's own ``generations.jsonl`` records (a live run, a re-score and a resume
read the same records) a chunk at a time, scores each chunk (:func:`wfeval.pipeline.score.score_all`),
writes its metric rows and sample rows and adds what results read to the
:class:`~wfeval.results.sample_table.ResultTable`: after generation (:func:`score_after`), or on
a thread beside it (:mod:`wfeval.pipeline.overlap`).
"""

from __future__ import annotations

import time
from collections import Counter
from typing import TYPE_CHECKING, Any, Iterable, Sequence

from wfeval.api import MetricResult
from wfeval.benchmarks.base import apply_scorer
from wfeval.pipeline import spool
from wfeval.pipeline.recorder import RunRecorder
from wfeval.pipeline.score import Reuse, score_all
from wfeval.results.sample_table import ResultTable
from wfeval.storage.artifacts import ArtifactStore
from wfeval.storage.metric_rows import ResultCache
from wfeval.storage.rundir import FILES
from wfeval.utils.progress import Progress

if TYPE_CHECKING:  # the plan is built by pipeline/plan.py, which the runner imports first
    from wfeval.pipeline.plan import RunPlan

PARTIAL_GENERATIONS = FILES.partial(FILES.generations)  # renamed generations.jsonl when generation is done
PARTIAL_SAMPLES = FILES.partial(FILES.samples)  # renamed samples.jsonl with results.json


class Scoring:
    """The score phase of one run: opened once, fed chunks of (request, result) pairs in sample
    order, closed to give the :class:`ResultTable`."""

    def __init__(self, plan: RunPlan, recorder: RunRecorder, progress_mode: str, store: ArtifactStore | None,
                 samples: int, reuse: Reuse | None = None, overlapped: Any = False, failed: Any = None):
        self.plan, self.recorder, self.reuse = plan, recorder, reuse
        self.failed = failed  # report.table.FailureTally: why metrics did not score, printed under the table
        rundir = recorder.rundir
        recorder.event("phase_started", phase="score", metrics=list(plan.metrics), reused=len(reuse or ()),
                       **({"overlapped": overlapped} if overlapped else {}))  # True, or "auto": decided later
        self.progress = Progress("score", samples, progress_mode)  # samples, each done when every metric scored it
        self.table = ResultTable(plan.metrics, plan.metrics.aggregation, plan.rules.get("group_by") or (),
                                 rows_file=rundir.file(FILES.metrics))
        # rows by content (storage/metric_rows.py); a refused row is an event of the run
        self.cache = ResultCache(store.root, on_event=recorder.event) if store is not None else None
        self.rows_out = rundir.writer(FILES.metrics)
        self.samples = rundir.writer(PARTIAL_SAMPLES, truncate=True)
        self.started, self.busy = time.perf_counter(), 0.0

    def score(self, chunk: list) -> None:
        began = time.perf_counter()
        reuse, rows_out = self.reuse, self.rows_out
        done = reuse.rows(chunk) if reuse is not None else {}
        chunk_offsets: dict[tuple[str, str], int] = {}
        left = Counter({q.sample_id: len(self.plan.metrics) for q, _ in chunk})  # metrics still to score

        def on_result(result: MetricResult, reused: bool) -> None:
            key = (result.metric_id, result.sample_id)
            chunk_offsets[key] = reuse.offsets[key] if reused else rows_out.write(result.to_dict())
            left[result.sample_id] -= 1
            if not left[result.sample_id]:
                self.progress.update()
            if self.failed is not None:
                self.failed.add_metric(result)

        per_metric = score_all(self.plan.metrics, chunk, done=done, on_result=on_result, cache=self.cache,
                               recompute=self.plan.recompute)
        rows_out.flush()
        self.table.add([q for q, _ in chunk], per_metric,
                       {m: [chunk_offsets[(m, r.sample_id)] for r in per_metric[m]] for m in self.table.rows})
        for row in sample_rows(chunk, per_metric, self.plan, self.recorder):
            self.samples.write(row)
        self.busy += time.perf_counter() - began

    def prepare_references(self, requests: Iterable[Any]) -> None:
        """Each metric's optional ``prepare_references(requests)`` (FVD: the reference videos'
        features), what it can do before any output exists; best effort, as ``prepare``: a
        problem is met again, and reported on its sample, when the sample is scored."""
        began = time.perf_counter()
        for metric in self.plan.metrics.values():
            hook = getattr(metric, "prepare_references", None)
            if callable(hook):
                try:
                    hook(requests)
                except Exception:  # noqa: BLE001 - best effort, see the docstring
                    pass
        self.busy += time.perf_counter() - began

    def close(self, **fields: Any) -> ResultTable:
        self.rows_out.close()
        self.samples.close()
        self.progress.close()
        cache = self.cache
        if cache is not None:
            cache.close()  # the rows it writes in the background are on disk before the run ends
        self.recorder.event("phase_finished", phase="score", seconds=round(time.perf_counter() - self.started, 3),
                            **fields, **({"result_cache": {"hits": cache.hits, "misses": cache.misses}}
                                         if cache is not None else {}))
        return self.table

    def abandon(self) -> None:
        """Close the files of a phase that will not finish (the run is failing)."""
        for writer in (self.rows_out, self.samples):
            try:
                writer.close()
            except OSError:
                pass
        if self.cache is not None:
            self.cache.close()
        self.progress.close()


def score_after(plan: RunPlan, offsets: Sequence[int], recorder: RunRecorder, progress_mode: str,
                store: ArtifactStore | None = None, failed: Any = None) -> ResultTable:
    """Score every sample of ``generations.jsonl`` after generation (its records at ``offsets``, read
    back a chunk at a time), a resumed run reusing its rows of unchanged samples and metric versions."""
    rundir = recorder.rundir
    kept = {m: metric for m, metric in plan.metrics.items() if m not in plan.recompute}  # run.recompute: none kept
    reuse = Reuse(rundir, kept, rundir.file(PARTIAL_GENERATIONS), recorder.previous) \
        if recorder.previous is not None else None
    rundir.replace(PARTIAL_GENERATIONS, FILES.generations)
    pairs = spool.stored_pairs(rundir.file(FILES.generations), offsets)
    scoring = Scoring(plan, recorder, progress_mode, store, len(pairs), reuse=reuse, failed=failed)
    try:
        for chunk in pairs.chunks(spool.CHUNK):
            scoring.score(chunk)
    except BaseException:
        scoring.abandon()
        raise
    return scoring.close()


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
            "run_spec_ref": f"manifest.json#config_hash={recorder.manifest.config_hash}",
            "metadata": {
                "generation_status": result.status,
                "generation_error": result.error,
                "metric_status": {m: status[(m, request.sample_id)] for m in per_metric},
            },
        }
        yield apply_scorer(plan.scorer, request, result, row)
