"""A run's scoring phase: after generation, or side by side with it.

Scoring reads the run's own ``generations.jsonl`` records (a live run, a re-score and a resume
read the same records) a chunk at a time, scores each chunk (:func:`wfeval.pipeline.score.score_all`),
writes its metric rows and sample rows and adds what results read to the
:class:`~wfeval.results.sample_table.ResultTable`.

**Overlap** (``run.overlap``, a fresh run that generates): while the model generates the next
samples, one scoring thread scores the samples already recorded. Generation stays on the main
thread (where ``run.sample_timeout_s`` can interrupt it); each finished unit of samples is
flushed to the records file and its byte offsets are queued; the thread reads the records back
through its own handle (so the file can take its final name when generation ends), in order,
one unit at a time. A unit is a whole number of scoring blocks, so every metric sees the same
blocks as a sequential run: the same rows, byte-identical ``results.json``. What is held is one
unit's pairs (and the queued offsets), as before. The first error of the thread (an exception
that is not a metric's own, e.g. an interruption) stops it: queued units are dropped and the
error is raised on the main thread at the next unit or at the end, so the run ends as it would
have without overlap; an error of generation cancels the queued units and waits for the one in
progress. A resumed run scores after generation, as it reuses rows against the complete records.
What needs only the requests (a metric's ``prepare_references``: FVD's reference features) is
done on the thread as generation starts. ``run.overlap=auto`` (the default) overlaps only when the
model's generation leaves the CPU to scoring (:class:`OverlapChoice`); otherwise the same thread
scores the same units after generation.
"""

from __future__ import annotations

import json
import math
import sys
import time
from collections import Counter
from concurrent.futures import Future, ThreadPoolExecutor
from typing import Any, BinaryIO, Iterable, Sequence

from wfeval.api import MetricResult
from wfeval.benchmarks.base import apply_scorer
from wfeval.pipeline import spool
from wfeval.pipeline.recorder import RunRecorder
from wfeval.pipeline.score import BLOCK, Reuse, score_all
from wfeval.pipeline.spool import pair_of
from wfeval.results.sample_table import ResultTable
from wfeval.storage.artifacts import ArtifactStore
from wfeval.storage.metric_rows import ResultCache
from wfeval.storage.rundir import FILES
from wfeval.utils.progress import Progress

PARTIAL_GENERATIONS = FILES.partial(FILES.generations)  # renamed generations.jsonl when generation is done
PARTIAL_SAMPLES = FILES.partial(FILES.samples)  # renamed samples.jsonl with results.json


def overlap_unit(batch_size: int, chunk: int | None = None) -> int:
    """Samples per overlapped unit: the smallest whole number of scoring blocks that holds a
    generation batch and divides the chunk (so the blocks are those of a sequential run, which
    scores chunk by chunk), else the chunk."""
    chunk = chunk or spool.CHUNK
    size = BLOCK * max(1, math.ceil(max(1, batch_size) / BLOCK))
    while size < chunk and chunk % size:
        size += BLOCK
    return size if size <= chunk and chunk % size == 0 else chunk


class Scoring:
    """The score phase of one run: opened once, fed chunks of (request, result) pairs in sample
    order, closed to give the :class:`ResultTable`."""

    def __init__(self, plan: Any, recorder: RunRecorder, progress_mode: str, store: ArtifactStore | None,
                 samples: int, reuse: Reuse | None = None, overlapped: Any = False, failed: Any = None):
        self.plan, self.recorder, self.reuse = plan, recorder, reuse
        self.failed = failed  # report.table.FailureTally: why metrics did not score, printed under the table
        rundir = recorder.rundir
        recorder.event("phase_started", phase="score", metrics=list(plan.metrics), reused=len(reuse or ()),
                       **({"overlapped": overlapped} if overlapped else {}))  # True, or "auto": decided later
        self.progress = Progress("score", samples, progress_mode)  # samples, each done when every metric scored it
        self.table = ResultTable(plan.metrics, plan.metrics.aggregation, plan.rules.get("group_by") or (),
                                 rows_file=rundir.file(FILES.metrics))
        self.cache = ResultCache(store.root) if store is not None else None  # rows by content (storage/metric_rows.py)
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


def score_after(plan: Any, offsets: Sequence[int], recorder: RunRecorder, progress_mode: str,
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


MIN_UNIT_SECONDS = 0.05  # a batch generated faster than this leaves nothing worth hiding scoring behind
MAX_CPU_FRACTION = 0.5  # overlap when generating kept the generating thread on the CPU less than this


def _cuda_in_use() -> bool:
    torch = sys.modules.get("torch")
    try:
        return bool(torch is not None and torch.cuda.is_initialized())
    except Exception:  # noqa: BLE001 - a torch without cuda support
        return False


class OverlapChoice:
    """``run.overlap``: ``true``/``false``, or ``auto``: decided from the second unit of samples (the
    first includes the model's setup), timed between the moments its first and second units were
    handed to scoring. Overlap pays when the model's generation leaves the CPU to scoring: the
    generating thread was on the CPU less than :data:`MAX_CPU_FRACTION` of that unit's wall time
    (it waits on a GPU, another process or the disk; a GPU's busy-wait counts as waiting: CUDA is
    initialised in the process), and the unit took at least :data:`MIN_UNIT_SECONDS`. A model
    that keeps the thread busy (Python, numpy, torch on the CPU) would only share the CPU and the
    GIL with scoring: its samples are scored after it has generated them all. Either way the rows
    and results are the same."""

    def __init__(self, mode: Any):
        self.mode = mode
        self.verdict: bool | None = None if mode == "auto" else bool(mode)
        self.measured: dict[str, Any] = {}
        self._mark: tuple[float, float] | None = None

    def after_unit(self) -> bool | None:
        """Called on the generating thread as each unit is handed over: whether to score it now
        (None: not decided yet)."""
        if self.verdict is None:
            now = (time.perf_counter(), time.thread_time())
            if self._mark is None:
                self._mark = now
                return None
            wall, cpu = now[0] - self._mark[0], now[1] - self._mark[1]
            fraction = cpu / wall if wall > 0 else 1.0
            cuda = _cuda_in_use()
            self.verdict = wall >= MIN_UNIT_SECONDS and (fraction < MAX_CPU_FRACTION or cuda)
            self.measured = {"unit_seconds": round(wall, 4), "cpu_fraction": round(fraction, 3), "cuda": cuda}
        return self.verdict

    def describe(self) -> dict[str, Any]:
        return {"mode": self.mode, "overlapped": bool(self.verdict), **self.measured}


class Overlapped:
    """Scoring on one thread while the main thread generates (see the module doc); with
    ``run.overlap=auto`` the units are held until :class:`OverlapChoice` has decided, and until the
    end of generation if it decides against overlapping."""

    def __init__(self, plan: Any, recorder: RunRecorder, progress_mode: str, store: ArtifactStore | None,
                 samples: int, failed: Any = None, requests: Iterable[Any] | None = None, mode: Any = True):
        self.recorder = recorder
        self.choice = OverlapChoice(mode)
        self.held: list[list[int]] = []
        self.scoring = Scoring(plan, recorder, progress_mode, store, samples, overlapped=mode, failed=failed)
        self.records: BinaryIO = recorder.rundir.file(PARTIAL_GENERATIONS).open("rb")  # kept across the rename
        self.pool = ThreadPoolExecutor(1, thread_name_prefix="wfeval-score")
        self.pending: list[Future] = []
        self.failed: list[BaseException] = []
        self.waited = 0.0  # seconds the main thread waited for scoring at the end
        if requests is not None:  # known before generation: the references' share of scoring starts now
            self.pending.append(self.pool.submit(self._guarded, self.scoring.prepare_references,
                                                 self._until_failed(requests)))

    def _until_failed(self, items: Iterable[Any]) -> Iterable[Any]:
        for item in items:  # a failed run stops the preparation at its next item
            if self.failed:
                return
            yield item

    def _guarded(self, work: Any, *args: Any) -> None:
        if self.failed:
            return  # an earlier unit failed: the rest is dropped, the error is raised on the main thread
        try:
            work(*args)
        except BaseException as exc:  # noqa: BLE001 - handed to the main thread
            self.failed.append(exc)

    def _unit(self, offsets: list[int]) -> None:
        chunk = []
        for offset in offsets:
            self.records.seek(offset)
            chunk.append(pair_of(json.loads(self.records.readline())))
        self.scoring.score(chunk)

    def submit(self, offsets: Sequence[int]) -> None:
        """Queue the samples whose records (flushed) start at ``offsets`` (or hold them: see the
        class doc); raise a scoring error."""
        self.check()
        if offsets:
            self.held.append(list(offsets))
            if self.choice.after_unit():
                self._release()
        self.pending = [f for f in self.pending if not f.done()]

    def _release(self) -> None:
        for unit in self.held:
            self.pending.append(self.pool.submit(self._guarded, self._unit, unit))
        self.held = []

    def check(self) -> None:
        if self.failed:
            raise self.failed[0]

    def finish(self) -> Any:
        """Wait for every queued unit; the table (or the scoring thread's first error)."""
        began = time.perf_counter()
        self._release()
        try:
            self.pool.shutdown(wait=True)
        finally:
            self.waited = time.perf_counter() - began
            self.records.close()
        if self.failed:
            self.scoring.abandon()
            raise self.failed[0]
        decided = {"overlap_choice": self.choice.describe()} if self.choice.mode == "auto" else {}
        return self.scoring.close(overlapped=bool(self.choice.verdict), busy_seconds=round(self.scoring.busy, 3),
                                  waited_seconds=round(self.waited, 3), **decided)

    def stop(self) -> None:
        """Generation failed: drop the queued units, wait for the one in progress, close the files."""
        self.failed.append(RuntimeError("generation stopped"))
        self.pool.shutdown(wait=True, cancel_futures=True)
        self.records.close()
        self.scoring.abandon()


def sample_rows(pairs, per_metric: dict[str, list[MetricResult]], plan: Any, recorder: RunRecorder):
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
