"""Generation: run the model once per (model identity, request); store outputs; cache results.

A finished generation is recorded as ``<store>/generations/<model_key>/<request_key>.json``
right after its arrays are stored, so a killed run loses at most the batch in flight and a
rerun (new run directory or the same one) does not call the model for finished samples.
Failed generations are not cached: they are retried on the next run.

Generation controls (``run.*``): ``batch_size``, ``limit`` (max samples), ``seed`` +
``seed_mode`` (one recorded seed per sample), ``sample_timeout_s`` (enforced where an interval
timer can interrupt the model) and ``fail_on_error`` (stop after N or a fraction of failures;
by default keep going and report).
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import signal
import threading
import time
import traceback
from collections import deque
from typing import Any, Callable, Iterable, Iterator, Mapping, Sequence

import numpy as np

from wfeval.api import ArtifactRef, GenerationRequest, GenerationResult
from wfeval.benchmarks.base import INPUT_ERROR, input_error
from wfeval.config.run_config import check_fail_on_error
from wfeval.models.protocol import Generated, NotGenerated
from wfeval.pipeline.contract import ContractViolation, OutputContract, check_outputs
from wfeval.pipeline.failure import storage_fault, user_exit
from wfeval.storage.artifacts import ArtifactCorrupt, ArtifactError, ArtifactStore, check_object
from wfeval.storage.generations import GenerationCache
from wfeval.storage.metric_rows import request_identity as request_key  # a request's content, artifacts by hash


class GenerationTimeout(TimeoutError):
    """A batch ran past ``run.sample_timeout_s`` × its size."""


def timeout_enforceable() -> bool:
    """True where an interval timer can interrupt the model (the main thread, on a POSIX system)."""
    return hasattr(signal, "setitimer") and threading.current_thread() is threading.main_thread()


@contextlib.contextmanager
def deadline(seconds: float | None) -> Iterator[None]:
    """Raise :class:`GenerationTimeout` inside the block once ``seconds`` have passed.

    Enforced with ``SIGALRM`` on the main thread: Python code is interrupted at once, a C call
    (a long kernel) when it returns, a subprocess run by the command adapter is killed. Elsewhere
    (another thread, Windows) it is a no-op; the phase event says whether it was enforced.
    """
    if not seconds or not timeout_enforceable():
        yield
        return

    def on_alarm(signum: int, frame: Any) -> None:
        raise GenerationTimeout(f"generation exceeded its time limit of {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, on_alarm)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


class GenerationStopped(RuntimeError):
    """``run.fail_on_error`` was reached: generation stopped before the remaining samples."""


def failure_limit(fail_on_error: Any, total: int) -> int | None:
    """The number of failed generations that stops the run, or None (never stop: the default).

    ``true``: the first failure; an integer N >= 1: the N-th failure; a fraction 0 < f < 1: the
    first failure that makes more than f of all ``total`` samples failed.
    """
    if fail_on_error is None or fail_on_error is False:
        return None
    if fail_on_error is True:
        return 1
    if isinstance(fail_on_error, int) and fail_on_error >= 1:
        return fail_on_error
    check_fail_on_error(fail_on_error)
    return math.floor(fail_on_error * total) + 1


def _store_outputs(store: ArtifactStore, arrays: Mapping[str, np.ndarray]) -> dict[str, ArtifactRef]:
    """Store outputs that met the contract; an OSError here is the store's, never the model's."""
    refs = {}
    for key, array in arrays.items():
        kind = "video" if array.ndim == 4 else "image" if array.ndim == 3 else "array"
        refs[str(key)] = store.put_array(array, kind=kind)
    return refs


def _failure(request: GenerationRequest, exc: BaseException, model_id: str) -> GenerationResult:
    metadata = dict(getattr(exc, "metadata", None) or {})
    metadata["traceback"] = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
    return GenerationResult(
        sample_id=request.sample_id,
        status="failed",
        error=f"{type(exc).__name__}: {exc}",
        stop_reason="timeout" if isinstance(exc, GenerationTimeout) else "",
        model_id=model_id,
        metadata=metadata,
    )


def _not_generated(request: GenerationRequest, reason: str, model_id: str, stop_reason: str,
                   metadata: Mapping[str, Any] | None = None) -> GenerationResult:
    return GenerationResult(sample_id=request.sample_id, status="not_generated", error=reason,
                            stop_reason=stop_reason, model_id=model_id, metadata=dict(metadata or {}))


def _outcome(request: GenerationRequest, out: Any, store: ArtifactStore, model_id: str,
             latency: float | None, contract: OutputContract | None = None) -> GenerationResult:
    """The result of one outcome the model returned (see wfeval.models.protocol)."""
    if isinstance(out, NotGenerated):
        return _not_generated(request, str(out), model_id, "not_generated", out.metadata)
    if isinstance(out, BaseException):
        fault = storage_fault(out)  # a corrupt stored input, a full disk: the store's, never the model's
        if fault is not None:
            raise fault from out
        return _failure(request, out, model_id)
    metadata: dict[str, Any] = {}
    if isinstance(out, Generated):
        metadata, out = dict(out.metadata), out.outputs
    try:
        arrays, conversions = check_outputs(request, out, contract)
    except ContractViolation as exc:  # the model broke the output contract: a failed generation
        return _failure(request, exc, model_id)
    if conversions:
        metadata["output_conversion"] = conversions
    refs = _store_outputs(store, arrays)
    return GenerationResult(
        sample_id=request.sample_id, artifacts=refs, status="ok", latency_seconds=latency,
        steps=len(request.controls.get("actions", ())), stop_reason="completed", model_id=model_id,
        metadata=metadata,
    )


def generate_batch(
    model: Any, batch: Sequence[GenerationRequest], store: ArtifactStore, model_id: str,
    *, sample_timeout_s: float | None = None, contract: OutputContract | None = None,
) -> list[GenerationResult]:
    """Run one batch; if the batch raises (or times out), retry its requests one by one."""
    started = time.perf_counter()
    try:
        with deadline(sample_timeout_s * len(batch) if sample_timeout_s else None):
            outputs = list(model.generate(list(batch)))
        if len(outputs) != len(batch):
            raise RuntimeError(f"model returned {len(outputs)} outputs for {len(batch)} requests")
    except SystemExit as exc:  # never let a model end the run, least of all with status 0
        raise user_exit(exc, f"model {getattr(model, 'name', type(model).__name__)!r} (generating sample "
                             f"{batch[0].sample_id!r})") from None
    except Exception as exc:
        if len(batch) == 1:
            return [_outcome(batch[0], exc, store, model_id, None, contract)]
        return [r for request in batch
                for r in generate_batch(model, [request], store, model_id, sample_timeout_s=sample_timeout_s,
                                        contract=contract)]
    latency = (time.perf_counter() - started) / len(batch)
    return [_outcome(request, out, store, model_id, latency, contract) for request, out in zip(batch, outputs)]


def generate_stream(
    requests: Iterable[GenerationRequest],
    model: Any,
    cache: GenerationCache,
    model_id: str,
    *,
    total: int,
    batch_size: int,
    on_result: Callable[[GenerationRequest, GenerationResult, bool], None],
    sample_timeout_s: float | None = None,
    fail_on_error: Any = None,
    contract: OutputContract | None = None,
    window: int = 256,
    regenerate: bool = False,
) -> Iterator[tuple[GenerationRequest, GenerationResult]]:
    """``(request, result)`` in request order; ``on_result(request, result, cached)`` is called as
    each result is known (a cache hit at once, a generation when its batch returns).

    Requests not served by the cache are sent to the model in batches of ``batch_size``, in
    order, as they come; at most ``window`` samples are held (a batch still filling up when the
    window is full goes to the model as it is). A request whose inputs the benchmark could not
    provide is not sent to the model: it is recorded as not generated
    (``stop_reason="input_error"``). ``fail_on_error`` (see :func:`failure_limit`, over ``total``
    samples) raises :class:`GenerationStopped` once enough generations failed. ``regenerate``
    (``run.regenerate``): nothing is served from the cache; every sample is generated again and
    its new result cached.
    """
    limit = failure_limit(fail_on_error, total)
    held: deque[list[Any]] = deque()  # [request, key, result or None], in request order
    pending: list[list[Any]] = []
    failed = resolved = 0

    def run_pending() -> None:
        nonlocal failed, resolved
        batch = generate_batch(model, [slot[0] for slot in pending], cache.store, model_id,
                               sample_timeout_s=sample_timeout_s, contract=contract)
        for slot, result in zip(pending, batch):
            if result.status == "ok":
                cache.put(slot[1], result)
            slot[2] = result
            resolved += 1
            on_result(slot[0], result, False)
            failed += result.status == "failed"
            if limit is not None and failed >= limit:
                raise GenerationStopped(
                    f"run.fail_on_error={fail_on_error!r}: stopped after {failed} failed generation(s) of "
                    f"{total} sample(s), {total - resolved} not attempted; last: sample {slot[0].sample_id!r}: "
                    f"{result.error}")
        pending.clear()

    for request in requests:
        key = request_key(request)
        slot: list[Any] = [request, key, None]
        held.append(slot)
        problem = input_error(request)
        hit = None if problem or regenerate else cache.get(key)
        if problem:
            slot[2] = _not_generated(request, f"input unavailable: {problem}", model_id, INPUT_ERROR)
        elif hit is not None:
            slot[2] = hit
        if slot[2] is not None:
            resolved += 1
            on_result(request, slot[2], hit is not None)
        else:
            pending.append(slot)
        if len(pending) >= max(1, batch_size) or (pending and len(held) >= window):
            run_pending()
        while held and held[0][2] is not None:
            done = held.popleft()
            yield done[0], done[2]
    if pending:
        run_pending()
    while held:
        done = held.popleft()
        yield done[0], done[2]


def verify_pair(request: GenerationRequest, result: GenerationResult, store: ArtifactStore) -> GenerationResult:
    """Re-hash every input, reference and output file of one sample (``run.verify_artifacts=true``).

    A sample whose files are missing or changed since they were stored is marked failed, with
    the file named, so metrics skip it instead of scoring altered data.
    """
    refs = {**{f"input {k}": v for k, v in request.inputs.items()},
            **{f"reference {k}": v for k, v in request.references.items()},
            **{f"output {k}": v for k, v in result.artifacts.items()}}
    for label, ref in refs.items():
        path = store.resolve(ref)
        try:
            check_object(ref, store=store)
        except ArtifactCorrupt as exc:
            problem = f"{label} changed since it was stored (sha256 mismatch): {exc.path}"
        except ArtifactError:
            problem = f"{label} missing: {path}"
        else:
            continue
        return dataclasses.replace(result, status="failed", error=f"ArtifactError: {problem}", artifacts={})
    return result
