"""Finished generations by (model identity, request): ``<store>/generations/<model key>/<request key>.json``.

A record is written right after the sample's arrays are stored, so a killed run loses at most the
batch in flight and a rerun does not call the model for finished samples. Failed generations are
not recorded (they are retried on the next run).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Callable

from wfeval.api import GenerationResult
from wfeval.storage import layout
from wfeval.storage.artifacts import ArtifactCorrupt, ArtifactError, ArtifactStore, atomic_write_bytes, check_object


class GenerationCache:
    """Finished generations by request key. A cached result whose artifact is missing or corrupt
    (content not matching its address: flipped bytes, truncated file) is not served: the model
    regenerates it, and a corrupt one is recorded as an ``artifact_corrupt`` event (``on_event``),
    never as a failure of the model."""

    def __init__(self, store: ArtifactStore, model_key: str, on_event: Callable[..., None] | None = None):
        self.store = store
        self.folder = layout.folder(store.root, layout.GENERATIONS) / model_key
        self.on_event = on_event

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
        atomic_write_bytes(self._path(key), json.dumps(result.to_dict()).encode("utf-8"), durable=self.store.durable)
