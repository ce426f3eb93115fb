"""Scoring side by side with generation (``run.overlap``, a fresh run that generates).

While the model generates the next samples, one scoring thread scores the samples already
recorded. Generation stays on the main thread (where ``run.sample_timeout_s`` can interrupt it);
each finished unit of samples is flushed to the records file and its byte offsets are queued; the
thread reads the records back through its own handle (so the file can take its final name when
generation ends), in order, one unit at a time. A unit is a whole number of scoring blocks
(:func:`overlap_unit`), so every metric sees the same blocks as a sequential run: the same rows,
byte-identical ``results.json``. What is held is one unit's pairs (and the queued offsets). The
first error of the thread (an exception that is not a metric's own, e.g. an interruption) stops
it: queued units are dropped and the error is raised on the main thread at the next unit or at
the end, so the run ends as it would have without overlap; an error of generation cancels the
queued units and waits for the one in progress. A resumed run scores after generation, as it
reuses rows against the complete records. The thread starts after the model's ``setup()`` and after
the heavy modules the metrics need are imported on the main thread (:func:`import_before_threads`):
two threads never import torch at once. When those modules are not imported yet (a model without
torch), they are imported and the thread started once the first unit of samples is generated, so the
first samples do not wait for torch (~1 s). What needs only the requests (a metric's
``prepare_references``: FVD's reference features) is the thread's first work, beside generation.
``run.overlap=auto`` (the default) overlaps only when the model's generation leaves the CPU to
scoring (:class:`OverlapChoice`); otherwise the same thread scores the same units after generation.
"""

from __future__ import annotations

import json
import math
import sys
import time
from concurrent.futures import Future, ThreadPoolExecutor
from typing import TYPE_CHECKING, Any, BinaryIO, Iterable, Sequence

from wfeval.pipeline import spool
from wfeval.pipeline.recorder import RunRecorder
from wfeval.pipeline.score import BLOCK
from wfeval.pipeline.scoring import PARTIAL_GENERATIONS, Scoring
from wfeval.pipeline.spool import pair_of
from wfeval.storage.artifacts import ArtifactStore

if TYPE_CHECKING:  # the plan is built by pipeline/plan.py, which the runner imports first
    from wfeval.pipeline.plan import RunPlan


def overlap_unit(batch_size: int, chunk: int | None = None) -> int:
    """Samples per overlapped unit: the smallest whole number of scoring blocks that holds a
    generation batch and divides the chunk (so the blocks are those of a sequential run, which
    scores chunk by chunk), else the chunk."""
    chunk = chunk or spool.CHUNK
    size = BLOCK * max(1, math.ceil(max(1, batch_size) / BLOCK))
    while size < chunk and chunk % size:
        size += BLOCK
    return size if size <= chunk and chunk % size == 0 else chunk


MIN_UNIT_SECONDS = 0.05  # a batch generated faster than this leaves nothing worth hiding scoring behind
MAX_CPU_FRACTION = 0.5  # overlap when generating kept the generating thread on the CPU less than this


def _cuda_in_use() -> bool:
    torch = sys.modules.get("torch")
    try:
        return bool(torch is not None and torch.cuda.is_initialized())
    except Exception:  # noqa: BLE001 - a torch without cuda support
        return False


def thread_clock() -> tuple[float, float, float]:
    """(wall, this thread's CPU, the seconds this thread has waited for a core) now. The wait, read from
    Linux's ``/proc/thread-self/schedstat`` (its run-queue delay), is time the thread was ready to run but
    the machine was busy with other work; 0.0 where the kernel does not say."""
    try:
        with open("/proc/thread-self/schedstat", "rb") as stats:
            waited = int(stats.read().split()[1]) / 1e9
    except (OSError, ValueError, IndexError):
        waited = 0.0
    return time.perf_counter(), time.thread_time(), waited


class OverlapChoice:
    """``run.overlap``: ``true``/``false``, or ``auto``: decided from the second unit of samples (the
    first includes the model's setup), timed between the moments its first and second units were
    handed to scoring. Overlap pays when the model's generation leaves the CPU to scoring: the
    generating thread was on the CPU less than :data:`MAX_CPU_FRACTION` of that unit's wall time
    (it waits on a GPU, another process or the disk; a GPU's busy-wait counts as waiting: CUDA is
    initialised in the process), and the unit took at least :data:`MIN_UNIT_SECONDS`. A model
    that keeps the thread busy (Python, numpy, torch on the CPU) would only share the CPU and the
    GIL with scoring: its samples are scored after it has generated them all. Either way the rows
    and results are the same. The time the thread waited for a core (:func:`thread_clock`: the
    machine busy with other work, e.g. a second evaluation) is not counted as waiting: on a loaded
    machine a busy model's thread runs a fraction of the wall time, and was once overlapped for it
    (scoring then took cores and the GIL from a model that needed them)."""

    clock = staticmethod(thread_clock)

    def __init__(self, mode: Any):
        self.mode = mode
        self.verdict: bool | None = None if mode == "auto" else bool(mode)
        self.measured: dict[str, Any] = {}
        self._mark: tuple[float, float, float] | None = None

    def after_unit(self) -> bool | None:
        """Called on the generating thread as each unit is handed over: whether to score it now
        (None: not decided yet)."""
        if self.verdict is None:
            now = self.clock()
            if self._mark is None:
                self._mark = now
                return None
            wall, cpu, waited = (a - b for a, b in zip(now, self._mark))
            ready = wall - waited  # the time the thread was not held back by other work
            fraction = cpu / ready if ready > 0 else 1.0
            cuda = _cuda_in_use()
            self.verdict = wall >= MIN_UNIT_SECONDS and (fraction < MAX_CPU_FRACTION or cuda)
            self.measured = {"unit_seconds": round(wall, 4), "cpu_fraction": round(fraction, 3),
                             "waited_for_cpu_seconds": round(waited, 4), "cuda": cuda}
        return self.verdict

    def describe(self) -> dict[str, Any]:
        return {"mode": self.mode, "overlapped": bool(self.verdict), **self.measured}


def import_before_threads(metrics: Any) -> list[str]:
    """Import, on the calling thread, the heavy modules the scoring thread will need: torch for a
    metric that computes on a torch device. Two threads importing torch at once (the scorer, and a
    model's setup or first batch) can see it partially initialised (``module 'torch' has no attribute
    'cuda'``): the scorer never starts an import of torch itself. Returns the modules imported."""
    import importlib

    done = []
    for name in missing_imports(metrics):
        importlib.import_module(name)
        done.append(name)
    return done


def missing_imports(metrics: Any) -> list[str]:
    """The heavy modules the metrics need (torch for a metric on a torch device, a metric's
    ``imports``) that are installed and not imported yet."""
    import importlib.util

    wanted = set()
    for metric in dict(metrics).values():
        needs_torch = getattr(metric, "needs_torch", None)  # wfeval.metrics.device.DeviceMixin
        if needs_torch() if callable(needs_torch) else str(getattr(metric, "device", "numpy") or "numpy") != "numpy":
            wanted.add("torch")
        wanted.update(str(m) for m in getattr(metric, "imports", ()) or ())
    return [name for name in sorted(wanted) if name not in sys.modules and importlib.util.find_spec(name) is not None]


class Overlapped:
    """Scoring on one thread while the main thread generates (see the module doc); with
    ``run.overlap=auto`` the units are held until :class:`OverlapChoice` has decided, and until the
    end of generation if it decides against overlapping."""

    def __init__(self, plan: RunPlan, recorder: RunRecorder, progress_mode: str, store: ArtifactStore | None,
                 samples: int, failed: Any = None, requests: Iterable[Any] | None = None, mode: Any = True):
        self.recorder = recorder
        self.choice = OverlapChoice(mode)
        self.held: list[list[int]] = []
        self.scoring = Scoring(plan, recorder, progress_mode, store, samples, overlapped=mode, failed=failed)
        self.metrics = plan.metrics
        self.records: BinaryIO = recorder.rundir.file(PARTIAL_GENERATIONS).open("rb")  # kept across the rename
        self.pool: ThreadPoolExecutor | None = None  # the scoring thread (:meth:`_start`)
        self.requests = requests
        self.pending: list[Future] = []
        self.failed: list[BaseException] = []
        self.waited = 0.0  # seconds the main thread waited for scoring at the end
        if not missing_imports(self.metrics):  # nothing to import first: the thread starts with generation
            self._start()

    def _start(self) -> ThreadPoolExecutor:
        """The scoring thread. Started with generation when the modules the metrics need are imported
        already (the model imported torch), else when the first unit of samples is queued (or at the
        end): the first samples are not held up by the metrics' imports, which are done here on the main
        thread before the thread exists (it never imports torch beside the model). The references'
        share of scoring (known before generation) is its first work."""
        if self.pool is None:
            import_before_threads(self.metrics)
            self.pool = ThreadPoolExecutor(1, thread_name_prefix="wfeval-score")
            if self.requests is not None:
                self.pending.append(self.pool.submit(self._guarded, self.scoring.prepare_references,
                                                     self._until_failed(self.requests)))
        return self.pool

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
            self._start()
            self.held.append(list(offsets))
            if self.choice.after_unit():
                self._release()
        self.pending = [f for f in self.pending if not f.done()]

    def _release(self) -> None:
        for unit in self.held:
            self.pending.append(self._start().submit(self._guarded, self._unit, unit))
        self.held = []

    def check(self) -> None:
        if self.failed:
            raise self.failed[0]

    def finish(self) -> Any:
        """Wait for every queued unit; the table (or the scoring thread's first error)."""
        began = time.perf_counter()
        self._release()
        try:
            self._start().shutdown(wait=True)
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
        if self.pool is not None:
            self.pool.shutdown(wait=True, cancel_futures=True)
        self.records.close()
        self.scoring.abandon()
