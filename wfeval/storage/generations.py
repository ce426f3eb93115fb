"""Finished generations by (model identity, request): ``<store>/generations/<model key>/<request key>.json``.

A record is written right after the sample's arrays are stored, so a killed run loses at most the
batch in flight and a rerun does not call the model for finished samples. Failed generations are
not recorded (they are retried on the next run). Each record is sealed (:mod:`wfeval.storage.seal`,
as the record of that model key and request key): a record edited, damaged, copied from another
request or written before seals existed is refused (a ``record_refused`` event naming the file) and
the model generates the sample again -- so are the probe scores a probing record keeps in its
metadata.
"""

from __future__ import annotations

from pathlib import Path
from typing import Callable

from wfeval.api import GenerationResult
from wfeval.storage import layout
from wfeval.storage.artifacts import ArtifactCorrupt, ArtifactError, ArtifactStore, atomic_write_bytes, check_object
from wfeval.storage.seal import Sealer, event_sink


class GenerationCache:
    """Finished generations by request key. A record whose seal does not hold is not served (a
    ``record_refused`` event); a cached result whose artifact is missing or corrupt (content not
    matching its address: flipped bytes, truncated file) is not served either: the model regenerates
    it, and a corrupt one is recorded as an ``artifact_corrupt`` event (``on_event``), never as a
    failure of the model."""

    def __init__(self, store: ArtifactStore, model_key: str, on_event: Callable[..., None] | None = None):
        self.store = store
        self.model_key = model_key
        self.folder = layout.folder(store.root, layout.GENERATIONS) / model_key
        self.on_event = on_event
        self.seal = Sealer(store.root, event_sink(on_event)) if on_event is not None else store.seal

    def _path(self, key: str) -> Path:
        return self.folder / f"{key}.json"

    def _name(self, key: str) -> str:
        return f"generation/{self.model_key}/{key}"

    def get(self, key: str) -> GenerationResult | None:
        # a refused record is never served, never the model's: it generates the sample again
        result = self.seal.served(self._name(key), self._path(key), GenerationResult.from_dict, "generation record",
                                  "regenerate")
        if result is None:
            return None
        for name, ref in result.artifacts.items():
            try:
                check_object(ref, store=self.store)
            except ArtifactCorrupt as exc:  # discarded from the store: regenerate, say so
                if self.on_event is not None:
                    self.on_event("artifact_corrupt", sample_id=result.sample_id, output=name, path=str(exc.path),
                                  discarded=exc.discarded, action="regenerate", reason=str(exc))
                return None
            except ArtifactError:
                return None  # artifacts were deleted: regenerate
        return result

    def put(self, key: str, result: GenerationResult) -> None:
        atomic_write_bytes(self._path(key), self.seal.dumps(self._name(key), result.to_dict()),
                           durable=self.store.durable)
