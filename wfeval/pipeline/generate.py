"""Generation: run the model once per (model identity, request); store outputs; cache results.

A finished generation is recorded as ``<store>/generations/<model_key>/<request_key>.json``
right after its arrays are stored, so a killed run loses at most the batch in flight and a
rerun (new run directory or the same one) does not call the model for finished samples.
Failed generations are not cached: they are retried on the next run.
"""

from __future__ import annotations

import json
import time
import traceback
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from wfeval._hashing import sha256_json
from wfeval.api import ArtifactRef, GenerationRequest, GenerationResult
from wfeval.artifacts import ArtifactStore, atomic_write_bytes


def request_key(request: GenerationRequest) -> str:
    """Identity of a request: its content, with artifact locations replaced by their hashes."""
    data = request.to_dict()
    for field in ("inputs", "references"):
        data[field] = {k: v.get("sha256") or v.get("uri") for k, v in data[field].items()}
    return sha256_json(data)


def model_key(model_cfg: Mapping[str, Any], version: str) -> str:
    """Identity of a model: its resolved config plus the version its class declares."""
    return sha256_json({"config": dict(model_cfg), "version": version})[:32]


class GenerationCache:
    def __init__(self, store: ArtifactStore, model_key: str):
        self.store = store
        self.folder = store.root / "generations" / model_key

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def get(self, key: str) -> GenerationResult | None:
        path = self._path(key)
        if not path.exists():
            return None
        try:
            result = GenerationResult.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (ValueError, TypeError):
            return None  # unreadable record: regenerate
        if any(not self.store.resolve(ref).exists() for ref in result.artifacts.values()):
            return None  # artifacts were deleted: regenerate
        return result

    def put(self, key: str, result: GenerationResult) -> None:
        atomic_write_bytes(self._path(key), json.dumps(result.to_dict()).encode("utf-8"))


def _store_outputs(store: ArtifactStore, request: GenerationRequest, outputs: Any) -> dict[str, ArtifactRef]:
    if not isinstance(outputs, Mapping):
        raise TypeError(f"model returned {type(outputs).__name__} for sample {request.sample_id!r}; "
                        "expected a mapping of output key -> array")
    refs = {}
    for key, value in outputs.items():
        array = np.asarray(value)
        if array.dtype == object:
            raise TypeError(f"sample {request.sample_id!r}: output {key!r} is not a numeric array")
        kind = "video" if array.ndim == 4 else "image" if array.ndim == 3 else "array"
        refs[str(key)] = store.put_array(array, kind=kind)
    return refs


def _failure(request: GenerationRequest, exc: BaseException, model_id: str) -> GenerationResult:
    return GenerationResult(
        sample_id=request.sample_id,
        status="failed",
        error=f"{type(exc).__name__}: {exc}",
        model_id=model_id,
        metadata={"traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))},
    )


def _steps_of(request: GenerationRequest) -> int:
    return len(request.controls.get("actions", ()))


def generate_batch(
    model: Any, batch: Sequence[GenerationRequest], store: ArtifactStore, model_id: str
) -> list[GenerationResult]:
    """Run one batch; if the batch raises, retry its requests one by one to isolate the failure."""
    started = time.perf_counter()
    try:
        outputs = list(model.generate(list(batch)))
        if len(outputs) != len(batch):
            raise RuntimeError(f"model returned {len(outputs)} outputs for {len(batch)} requests")
    except Exception as exc:
        if len(batch) == 1:
            return [_failure(batch[0], exc, model_id)]
        return [r for request in batch for r in generate_batch(model, [request], store, model_id)]
    latency = (time.perf_counter() - started) / len(batch)
    results = []
    for request, out in zip(batch, outputs):
        try:
            refs = _store_outputs(store, request, out)
        except Exception as exc:
            results.append(_failure(request, exc, model_id))
            continue
        results.append(GenerationResult(
            sample_id=request.sample_id, artifacts=refs, status="ok", latency_seconds=latency,
            steps=_steps_of(request), stop_reason="completed", model_id=model_id,
        ))
    return results


def generate_all(
    requests: Sequence[GenerationRequest],
    model: Any,
    cache: GenerationCache,
    model_id: str,
    *,
    batch_size: int,
    on_result: Callable[[GenerationRequest, GenerationResult, bool], None],
) -> list[GenerationResult]:
    """Results in request order; ``on_result(request, result, cached)`` is called for each."""
    keys = [request_key(r) for r in requests]
    results: list[GenerationResult | None] = [None] * len(requests)
    pending = []
    for i, (request, key) in enumerate(zip(requests, keys)):
        hit = cache.get(key)
        if hit is not None:
            results[i] = hit
            on_result(request, hit, True)
        else:
            pending.append(i)
    for start in range(0, len(pending), max(1, batch_size)):
        chunk = pending[start:start + max(1, batch_size)]
        batch_results = generate_batch(model, [requests[i] for i in chunk], cache.store, model_id)
        for i, result in zip(chunk, batch_results):
            if result.status == "ok":
                cache.put(keys[i], result)
            results[i] = result
            on_result(requests[i], result, False)
    return [r for r in results if r is not None]
