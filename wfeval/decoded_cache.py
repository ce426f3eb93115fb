"""Decoded files cached by content: a dataset's video decoded once per store, not once per run.

``stored_file(store, path, how, decode)`` returns the :class:`~wfeval.api.ArtifactRef` of the
array ``decode()`` gives for ``path``: on the first call it decodes and stores it, and records
``<store>/decoded/ab/<key>.json``, the key being the sha256 of (the file's bytes, ``how`` — the
decoding options —, the decoder versions); later calls (a rerun, each model of a sweep, another
run on the same dataset) hash the small encoded file and return the stored object's ref without
decoding or hashing the decoded array. A record whose object is gone or unreadable is redone.
Folders (frame directories) are decoded every time.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any, Callable

from wfeval.api import ArtifactRef

FORMAT = "wfeval.decoded/1"


def _decoders() -> dict[str, str | None]:
    from importlib import metadata

    out: dict[str, str | None] = {}
    for name in ("av", "numpy", "pillow"):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = None
    return out


class DecodedCache:
    def __init__(self, store: Any):
        self.store = store
        self.folder = Path(store.root) / "decoded"

    def key(self, data: bytes, how: str) -> str:
        head = json.dumps({"format": FORMAT, "how": how, "decoders": _decoders()}, sort_keys=True).encode()
        return hashlib.sha256(head + b"\0" + hashlib.sha256(data).digest()).hexdigest()

    def get(self, key: str) -> ArtifactRef | None:
        try:
            entry = json.loads((self.folder / key[:2] / f"{key}.json").read_text(encoding="utf-8"))
            ref = ArtifactRef.from_dict(entry["ref"])
        except (OSError, ValueError, TypeError, KeyError):
            return None
        if not ref.sha256 or not self.store.object_path(ref.sha256).exists():
            return None
        return self.store.ref_of(ref.sha256, kind=ref.kind, shape=ref.shape, dtype=ref.dtype, metadata=ref.metadata)

    def put(self, key: str, ref: ArtifactRef) -> None:
        from wfeval.artifacts import atomic_write_bytes

        try:
            atomic_write_bytes(self.folder / key[:2] / f"{key}.json",
                               json.dumps({"format": FORMAT, "ref": ref.to_dict()}).encode("utf-8"), durable=False)
        except OSError:
            pass  # a cache that cannot be written costs time, never a result


def stored_file(store: Any, path: Path, how: str, decode: Callable[[], tuple[Any, str]]) -> ArtifactRef:
    """The stored array of a decoded file, decoding only when this content was never stored."""
    if not path.is_file():
        array, kind = decode()
        return store.put_array(array, kind=kind)
    cache = DecodedCache(store)
    try:
        key = cache.key(path.read_bytes(), how)
    except OSError:
        key = None
    return _get_or_store(store, cache, key, decode)


def stored_derived(store: Any, source: ArtifactRef, how: str, derive: Callable[[], tuple[Any, str]]) -> ArtifactRef:
    """The stored array derived from a stored one (e.g. its first frame), derived once per store."""
    cache = DecodedCache(store)
    key = cache.key(source.sha256.encode(), f"derived:{how}") if source.sha256 else None
    return _get_or_store(store, cache, key, derive)


def _get_or_store(store: Any, cache: "DecodedCache", key: str | None,
                  compute: Callable[[], tuple[Any, str]]) -> ArtifactRef:
    """The cached ref under ``key``, else ``compute()`` stored (and cached when there is a key)."""
    hit = cache.get(key) if key else None
    if hit is not None:
        return hit
    array, kind = compute()
    ref = store.put_array(array, kind=kind)
    if key:
        cache.put(key, ref)
    return ref
