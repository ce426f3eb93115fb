"""No repeated work in scoring: metric results cached in the store, arrays read once, ahead.

:func:`score_metrics` is what :func:`wfeval.pipeline.score.score_all` calls. For every (metric,
sample) it first looks the row up in a :class:`ResultCache` under
``<store>/results/<metric digest[:16]>/ab/<key>.json``; the key is the sha256 of

* the metric's identity and config: class path, declared version, wfeval's version, every
  public attribute of the metric object (its resolved options, device included) and what its
  optional ``cache_identity()`` adds (FVD: the sha256 of the weights the spec resolves to), and
* what it reads: the request (:func:`wfeval.pipeline.generate.request_key`: content hashes of
  inputs and references, controls, metadata) and the generation result with artifact locations
  replaced by their content hashes.

So a rerun, a resume or a sweep rescoring the same generations costs only what changed. Only
``ok``/``fail`` rows of deterministic built-in metrics (or of a metric declaring
``cacheable = True``) are cached; skips and errors are recomputed; a cached row whose own
artifact refs (FVD's feature files) are gone is recomputed.

The misses are scored in blocks of samples: a reader thread decodes (and verifies) the arrays of
the next block while the current one is scored, every metric of a block reads each array once
(:func:`wfeval.storage.artifacts.preloaded`), and a metric with a ``prepare(pairs)`` method (FVD: clips of
the block's samples share I3D forward passes) gets the block first.
"""

from __future__ import annotations

import hashlib
import json
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from wfeval.api import GenerationRequest, GenerationResult, MetricResult
from wfeval.storage import layout
from wfeval.utils.hashing import canonical_json, sha256_json

BLOCK = 8  # samples per block: bounds the arrays held (two blocks at a time)
CACHED_STATUSES = ("ok", "fail")
_NOT_CONFIG = {"confidence", "seed"}  # aggregation-only options: they do not change a per-sample row


def _plain(value: Any) -> Any:
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    if isinstance(value, (list, tuple, set, frozenset)):
        items = [_plain(v) for v in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    if hasattr(value, "__dataclass_fields__"):
        return {"__type__": type(value).__qualname__, **{k: _plain(getattr(value, k)) for k in value.__dataclass_fields__}}
    return f"<{type(value).__module__}.{type(value).__qualname__}>"  # an object: only its type counts


def metric_identity(metric: Any) -> dict[str, Any] | None:
    """What defines a metric's per-sample rows, or None when its rows must not be cached."""
    cls = type(metric)
    builtin = cls.__module__.startswith("wfeval.")
    if not (getattr(metric, "cacheable", builtin) and getattr(metric, "reproducibility", "deterministic")
            == "deterministic"):
        return None
    config = {k: _plain(v) for k, v in sorted(vars(metric).items())
              if not k.startswith("_") and k not in _NOT_CONFIG}
    extra = getattr(metric, "cache_identity", None)  # what the options do not show (FVD: the weights' sha256)
    if callable(extra):
        config["__identity__"] = _plain(extra())
    return {"class": f"{cls.__module__}.{cls.__qualname__}", "version": str(getattr(metric, "version", "")),
            "wfeval": _version(), "config": config}


def _version() -> str:
    from importlib import metadata

    try:
        return metadata.version("wfeval")
    except metadata.PackageNotFoundError:  # a source checkout without install
        return "unknown"


def request_identity(request: GenerationRequest) -> str:
    """A request's content with artifact locations replaced by their hashes (as the generation
    cache's request key)."""
    data = request.to_dict()
    for field in ("inputs", "references"):
        data[field] = {k: v.get("sha256") or v.get("uri") for k, v in data[field].items()}
    return sha256_json(data)


def _json(text: str) -> str:
    return json.dumps(text, ensure_ascii=False)


def _content(result: GenerationResult) -> dict[str, Any]:
    data = result.to_dict()
    data["artifacts"] = {k: v.get("sha256") or v.get("uri") for k, v in data.get("artifacts", {}).items()}
    return data


class ResultCache:
    """Per-sample metric rows by (metric identity, content of what the metric reads)."""

    def __init__(self, root: str | Path):
        self.folder = layout.folder(root, layout.METRIC_ROWS)
        self.hits = self.misses = 0

    def key(self, identity: Mapping[str, Any], metric_id: str, request: GenerationRequest,
            result: GenerationResult) -> tuple[str, str]:
        digest = sha256_json(identity)
        return digest, sha256_json({"metric": digest, "metric_id": metric_id, "request": request_identity(request),
                                    "result": _content(result)})

    @staticmethod
    def sample_part(request: GenerationRequest, result: GenerationResult) -> str:
        """What every metric's key of one sample shares (computed once per sample, not per metric)."""
        return f'"request":{_json(request_identity(request))},"result":{canonical_json(_content(result))}'

    @staticmethod
    def key_of(digest: str, metric_id: str, sample_part: str) -> str:
        """:meth:`key`'s second half from the metric identity's digest and :meth:`sample_part`: the
        same text ``sha256_json`` hashes (keys sorted: metric, metric_id, request, result)."""
        text = f'{{"metric":{_json(digest)},"metric_id":{_json(metric_id)},{sample_part}}}'
        return hashlib.sha256(text.encode("utf-8")).hexdigest()

    def _path(self, digest: str, key: str) -> Path:
        return self.folder / digest[:16] / key[:2] / f"{key}.json"

    def get(self, digest: str, key: str) -> MetricResult | None:
        path = self._path(digest, key)
        try:
            row = MetricResult.from_dict(json.loads(path.read_text(encoding="utf-8")))
        except (OSError, ValueError, TypeError):
            return None
        if any(not Path(ref.uri.removeprefix("file://")).exists() for ref in row.artifact_refs.values()):
            return None  # e.g. FVD's feature file was deleted: recompute it
        return row

    def put(self, digest: str, key: str, row: MetricResult) -> None:
        from wfeval.storage.artifacts import atomic_write_bytes

        if row.status in CACHED_STATUSES:
            try:
                atomic_write_bytes(self._path(digest, key), json.dumps(row.to_dict()).encode("utf-8"), durable=False)
            except OSError:
                pass  # a cache that cannot be written costs time, never a result


def _refs(request: GenerationRequest, result: GenerationResult) -> Iterable[Any]:
    yield from request.references.values()
    yield from result.artifacts.values()


def _read_block(block: Sequence[tuple[GenerationRequest, GenerationResult]]) -> dict[str, Any]:
    """The verified arrays of a block's references and outputs, by content hash (unreadable: left out)."""
    from wfeval.storage.artifacts import ArtifactError, read_array

    arrays: dict[str, Any] = {}
    for request, result in block:
        for ref in _refs(request, result):
            if ref.sha256 and ref.sha256 not in arrays:
                try:
                    arrays[ref.sha256] = read_array(ref)
                except (ArtifactError, ValueError):
                    pass  # the metric reads it itself and reports the problem on its sample
    return arrays


def score_metrics(
    metrics: Mapping[str, Any],
    pairs: Sequence[tuple[GenerationRequest, GenerationResult]],
    *,
    done: Mapping[tuple[str, str], MetricResult],
    on_result: Callable[[MetricResult, bool], None],
    score_one: Callable[[str, Any, GenerationRequest, GenerationResult], MetricResult],
    cache: ResultCache | None = None,
    block: int = BLOCK,
    variants: Mapping[str, Any] | None = None,
) -> dict[str, list[MetricResult]]:
    """Per metric id, one row per pair in pair order; ``done`` rows (a resumed run) are reused as
    they are (``on_result(row, True)``), cached rows are new rows of this run (``on_result(row, False)``).
    ``variants``: per metric id, what else changes its rows (the core's ``on_failure``)."""
    from wfeval.storage.artifacts import preloaded

    rows: dict[str, list[MetricResult | None]] = {m: [None] * len(pairs) for m in metrics}
    keys: dict[tuple[str, int], tuple[str, str]] = {}
    todo: list[list[str]] = [[] for _ in pairs]  # metric ids to compute, per pair
    parts: list[str | None] = [None] * len(pairs)  # each sample's share of its cache keys
    for metric_id, metric in metrics.items():
        identity = metric_identity(metric) if cache is not None else None
        if identity is not None and variants and variants.get(metric_id):  # e.g. on_failure: changes rows
            identity = {**identity, "variant": _plain(variants[metric_id])}
        digest = sha256_json(identity) if identity is not None else ""
        for i, (request, result) in enumerate(pairs):
            previous = done.get((metric_id, request.sample_id))
            if previous is not None:
                rows[metric_id][i] = previous
                on_result(previous, True)
                continue
            if identity is not None:
                if parts[i] is None:
                    parts[i] = cache.sample_part(request, result)
                keys[(metric_id, i)] = digest, cache.key_of(digest, metric_id, parts[i])
                hit = cache.get(*keys[(metric_id, i)])
                if hit is not None:
                    if hit.metric_id != metric_id or hit.sample_id != request.sample_id:
                        hit = MetricResult.from_dict({**hit.to_dict(), "metric_id": metric_id,
                                                      "sample_id": request.sample_id})
                    rows[metric_id][i] = hit
                    cache.hits += 1
                    on_result(hit, False)
                    continue
                cache.misses += 1
            todo[i].append(metric_id)
    blocks = [idx for idx in (list(range(s, min(s + block, len(pairs)))) for s in range(0, len(pairs), block))
              if any(todo[i] for i in idx)]
    with ThreadPoolExecutor(1, thread_name_prefix="wfeval-reader") as reader:
        ahead: Future | None = reader.submit(_read_block, [pairs[i] for i in blocks[0]]) if blocks else None
        for n, idx in enumerate(blocks):
            arrays = ahead.result() if ahead is not None else {}
            ahead = reader.submit(_read_block, [pairs[i] for i in blocks[n + 1]]) if n + 1 < len(blocks) else None
            with preloaded(arrays):
                for metric_id, metric in metrics.items():
                    mine = [i for i in idx if metric_id in todo[i]]
                    prepare = getattr(metric, "prepare", None)
                    if mine and callable(prepare):
                        try:
                            prepare([pairs[i] for i in mine])
                        except Exception:  # best effort: compute_sample reports problems per sample
                            pass
                    for i in mine:
                        request, result = pairs[i]
                        row = score_one(metric_id, metric, request, result)
                        rows[metric_id][i] = row
                        if (metric_id, i) in keys:
                            cache.put(*keys[(metric_id, i)], row)
                        on_result(row, False)
            del arrays
    return {m: [r for r in rs if r is not None] for m, rs in rows.items()}
