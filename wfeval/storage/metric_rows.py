"""Per-sample metric rows cached in the store by content (what :mod:`wfeval.pipeline.score` asks first).

For every (metric, sample) scoring first looks the row up in a :class:`ResultCache` under
``<store>/results/<metric digest[:16]>/ab/<key>.json``; the key is the sha256 of

* the metric's identity and config: class path, declared version, wfeval's version, the code of
  a user's metric class (its module and the user modules it imports, by content:
  :func:`wfeval.utils.code_identity.code_identity`), every public attribute of the metric object
  (its resolved options, device included; a callable option by its qualified name and code, an
  object by its class's code and state) and what its optional ``cache_identity()`` adds (FVD: the
  sha256 of the weights the spec resolves to), and
* what it reads: the request (:func:`wfeval.pipeline.generate.request_key`: content hashes of
  inputs and references, controls, metadata) and the generation result with artifact locations
  replaced by their content hashes.

So a rerun, a resume or a sweep rescoring the same generations costs only what changed. Only
``ok``/``fail`` rows of deterministic built-in metrics (or of a metric declaring
``cacheable = True``) are cached; skips and errors are recomputed; a cached row whose own
artifact refs (FVD's feature files) are gone or hold other bytes is recomputed, and such a row is
never written. Every row is sealed (:mod:`wfeval.storage.seal`, as the row of that metric digest
and key): a row edited, damaged, copied from another key or written before seals existed is refused
(a ``record_refused`` event naming the file, through ``on_event``) and scored again.
``run.recompute=[fvd]`` (or ``all``) bypasses the cache for those metrics (their new rows replace
the cached ones). Rows are written by a background thread (atomically, as
before); :meth:`ResultCache.close` waits for them, and the scoring phase closes its cache before
the run ends.

"""

from __future__ import annotations

import hashlib
import json
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any, Mapping

from wfeval.api import GenerationRequest, GenerationResult, MetricResult
from wfeval.storage import layout
from wfeval.storage.safe_io import atomic_write_bytes
from wfeval.storage.seal import Sealer, event_sink
from wfeval.utils.code_identity import code_identity, value_identity
from wfeval.utils.hashing import canonical_json, sha256_json

CACHED_STATUSES = ("ok", "fail")
MAX_PENDING = 2048  # cached rows waiting for the background writer (~1 KB each); put waits beyond
_NOT_CONFIG = {"confidence", "seed"}  # aggregation-only options: they do not change a per-sample row


def identity_value(value: Any) -> Any:
    """A value as a metric identity holds it (:func:`wfeval.utils.code_identity.value_identity`):
    plain data as itself, a callable by its qualified name and code, an object by its class's code
    and state -- never only by its type."""
    return value_identity(value)


def metric_identity(metric: Any, *, cacheable_only: bool = True) -> dict[str, Any] | None:
    """What defines a metric's per-sample rows, or None when its rows must not be cached (unless
    ``cacheable_only`` is False: a resumed run compares every metric's identity)."""
    cls = type(metric)
    builtin = cls.__module__.startswith("wfeval.")
    if cacheable_only and not (getattr(metric, "cacheable", builtin) and getattr(
            metric, "reproducibility", "deterministic") == "deterministic"):
        return None
    config = {k: identity_value(v) for k, v in sorted(vars(metric).items())
              if not k.startswith("_") and k not in _NOT_CONFIG}
    extra = getattr(metric, "cache_identity", None)  # what the options do not show (FVD: the weights' sha256)
    if callable(extra):
        config["__identity__"] = identity_value(extra())
    identity = {"class": f"{cls.__module__}.{cls.__qualname__}", "version": str(getattr(metric, "version", "")),
                "wfeval": _version(), "config": config}
    if not builtin:  # a user's metric: the code it runs (its module and the user modules it imports)
        identity["code"] = code_identity(cls)
    return identity


def metric_digest(metric: Any) -> str:
    """The sha256 of a metric's full identity (code, options, callables), cacheable or not: what a
    resumed run compares before it keeps a metric's rows (``manifest.json``: ``metrics.<id>.identity``)."""
    return sha256_json(metric_identity(metric, cacheable_only=False))


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


#: files a cached row names are checked against their sha256 up to this size (FVD's features: ~2 KB)
VERIFY_BYTES = 1 << 20


def _intact(ref: Any) -> bool:
    """Whether the file a row names is there and (up to :data:`VERIFY_BYTES`) holds the bytes it names."""
    path = Path(ref.uri.removeprefix("file://"))
    try:
        if not ref.sha256 or path.stat().st_size > VERIFY_BYTES:
            return path.exists()
        return hashlib.sha256(path.read_bytes()).hexdigest() == ref.sha256
    except OSError:
        return False


class ResultCache:
    """Per-sample metric rows by (metric identity, content of what the metric reads)."""

    def __init__(self, root: str | Path, on_event: Any = None):
        self.folder = layout.folder(root, layout.METRIC_ROWS)
        self.seal = Sealer(root, event_sink(on_event))  # rows are sealed with the store's key
        self.hits = self.misses = 0
        # rows are written by one background thread (file creation is most of a row's cost, and a
        # thread in a system call leaves the GIL to scoring); until written they are served from here
        self._pending: dict[Path, bytes] = {}
        self._lock = threading.Lock()
        self._room = threading.Semaphore(MAX_PENDING)  # what is held stays bounded if the disk is slow
        self._writer: ThreadPoolExecutor | None = None

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
        try:  # a refused row is never served: the metric scores the sample again
            row = self.seal.served(f"metric_row/{digest}/{key}", path, MetricResult.from_dict, "metric row", "rescore",
                                   self._pending.get(path))
        except OSError:
            return None
        if row is None:
            return None
        if not all(_intact(ref) for ref in row.artifact_refs.values()):
            return None  # e.g. FVD's feature file was deleted or holds other bytes: recompute the row
        return row

    def put(self, digest: str, key: str, row: MetricResult) -> None:
        """Cache ``row`` (written in the background: :meth:`close` waits for every write)."""
        # a row whose files are not what it names (a storage problem, not the sample's) is never cached
        if row.status in CACHED_STATUSES and all(_intact(ref) for ref in row.artifact_refs.values()):
            path = self._path(digest, key)
            try:
                data = self.seal.dumps(f"metric_row/{digest}/{key}", row.to_dict())
            except OSError:
                return  # no key (a read-only store): a cache that cannot be written costs time, never a result
            self._room.acquire()
            with self._lock:
                self._pending[path] = data
            if self._writer is None:
                self._writer = ThreadPoolExecutor(1, thread_name_prefix="wfeval-result-cache")
            self._writer.submit(self._write, path, data)

    def _write(self, path: Path, data: bytes) -> None:
        try:
            atomic_write_bytes(path, data, durable=False)
        except OSError:
            pass  # a cache that cannot be written costs time, never a result
        finally:
            with self._lock:
                if self._pending.get(path) is data:
                    del self._pending[path]
            self._room.release()

    def close(self) -> None:
        """Wait until every row put is written (or failed to be: a cache costs time, never a result)."""
        if self._writer is not None:
            self._writer.shutdown(wait=True)
            self._writer = None
