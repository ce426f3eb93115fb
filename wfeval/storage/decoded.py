"""Decoded dataset files by content: a dataset's file is decoded once per store, and never copied.

``file_ref(store, path, kind=..., decoder=..., options=...)`` returns the
:func:`wfeval.storage.artifacts.file_ref` of the array ``decoder`` makes of ``path``: a ref to the file
itself, with the address (sha256), shape and dtype of the decoded array; nothing is written into
``objects/``. The first call decodes the file and records ``<store>/decoded/ab/<key>.json``
(the decoded array's sha256, shape and dtype), the key being the sha256 of (what the file holds —
``decoder.digest``: its bytes, or a frame folder's frames —, the decoder, its version and library
versions, the options, the file's suffix and the artifact kind). Later calls (a rerun, each model
of a sweep, another run on the same dataset) hash the small encoded file and build the ref from
the record, without decoding or hashing the decoded array. Reading the ref decodes the file and
checks the content (:func:`wfeval.storage.artifacts.read_array`). Records are sealed with the store's
key (:mod:`wfeval.storage.seal`): one edited, damaged or written before seals existed is refused
(the store's ``seal.on_refused``: an event of the run) and the file decoded again.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any, Callable, Mapping

from wfeval.api import ArtifactRef
from wfeval.storage import layout
from wfeval.storage.artifacts import FileDecoder, atomic_write_bytes, content_sha256
from wfeval.storage.artifacts import file_ref as _file_ref
from wfeval.storage.seal import Sealer
from wfeval.utils.hashing import is_sha256, sha256_json

FORMAT = "wfeval.decoded/2"  # /1 recorded a copy in objects/: its records are ignored (another key)



def _found(entry: dict[str, Any]) -> dict[str, Any]:
    """What a decoded-file record names (its object, shape, dtype); ValueError for another format."""
    found = {"sha256": entry["sha256"], "shape": tuple(int(n) for n in entry["shape"]), "dtype": str(entry["dtype"])}
    if entry.get("format") != FORMAT or not is_sha256(found["sha256"]):
        raise ValueError(f"not a {FORMAT} record, or no object name")
    return found

class DecodedCache:
    def __init__(self, store: Any):
        self.folder = layout.folder(store.root, layout.DECODED)
        self.seal = getattr(store, "seal", None) or Sealer(store.root)

    def _path(self, key: str) -> Path:
        return self.folder / key[:2] / f"{key}.json"

    def key(self, digest: str, path: Path, kind: str, decoder: FileDecoder, options: Mapping[str, Any]) -> str:
        return sha256_json({"format": FORMAT, "file": digest, "suffix": path.suffix.lower(), "kind": kind,
                            "decoder": decoder.name, "version": decoder.version,
                            "versions": dict(decoder.versions()), "options": dict(options)})

    def get(self, key: str) -> dict[str, Any] | None:
        try:  # a refused record is never served: the file is decoded again
            return self.seal.served(f"decoded/{key}", self._path(key), _found, "decoded-file record", "decode again")
        except OSError:
            return None

    def put(self, key: str, found: Mapping[str, Any]) -> None:
        record = {"format": FORMAT, "sha256": found["sha256"], "shape": list(found["shape"]), "dtype": found["dtype"]}
        try:
            atomic_write_bytes(self._path(key), self.seal.dumps(f"decoded/{key}", record), durable=False)
        except OSError:
            pass  # a cache that cannot be written costs time, never a result


def file_ref(store: Any, path: Path, *, kind: str, decoder: FileDecoder, options: Mapping[str, Any],
             decode: Callable[[], Any] | None = None) -> ArtifactRef:
    """The ref of ``path`` decoded by ``decoder`` with ``options`` (``decode()``: the same decoding,
    if the caller wraps it), decoding only when this content was never decoded in ``store``.

    A file that cannot be read raises the decoder's error (a ValueError naming the file)."""
    decode = decode or (lambda: decoder.decode(path, options))
    cache = DecodedCache(store)
    try:
        before = decoder.digest(path)
    except (OSError, ValueError):
        decode()  # the decoder's own error, naming the file and what is wrong with it
        raise ValueError(f"{path}: cannot be read") from None
    key = cache.key(before, path, kind, decoder, options)
    found = cache.get(key)
    if found is None:
        import numpy as np

        array = np.asarray(decode())
        try:
            after = decoder.digest(path)
        except (OSError, ValueError):
            after = None
        if after != before:
            raise ValueError(f"{path}: the file changed while it was read; evaluate again once it is complete")
        found = {"sha256": content_sha256(array), "shape": tuple(int(n) for n in array.shape),
                 "dtype": str(array.dtype)}
        cache.put(key, found)
    return _file_ref(path, kind=kind, decoder=decoder, options=options, file_sha256=before, **found)
