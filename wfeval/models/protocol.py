"""The world-model protocol, as the pipeline drives it (docs/adding-a-model.md walks through it).

A model is any object with::

    name: str                       # shown in results (optional; the class name otherwise)
    version: str                    # part of the cache identity: bump it when outputs change
    def generate(self, requests): ...  # Sequence[GenerationRequest] -> one outcome per request
    def setup(self): ...            # optional, called once before the first batch
    def close(self): ...            # optional, called once after the last batch (also on failure)
    def fingerprint(self): ...      # optional: what identifies it beyond its config (file hashes)

``generate`` gets a batch (``run.batch_size`` requests, or the model's own ``batch_size``) and
returns one outcome per request, in order. An outcome is

- a mapping of output key -> uint8 array (``{"generated_video": T×H×W×3}``): generated;
- a :class:`Generated` (the same mapping plus metadata, e.g. a log, kept in the trace);
- a :class:`NotGenerated` (an exception *instance*, returned, not raised): there is no output
  for this sample and that is not an error of the model (e.g. a precomputed file is absent);
- any other exception instance: this sample failed (its message is recorded).

Raising from ``generate`` fails the whole batch; the pipeline then retries its requests one at a
time, so one bad sample cannot take its neighbours down. Each request carries its seed in
``request.generation["seed"]`` (derived per sample from ``run.seed``, see ``run.seed_mode``).
The model never writes files into the store and never sees a metric or a reference output it
was not given.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping


class NotGenerated(Exception):
    """Outcome: no output exists for this sample (counted as not generated, not as a failure)."""

    def __init__(self, reason: str, metadata: Mapping[str, Any] | None = None):
        super().__init__(reason)
        self.metadata = dict(metadata or {})


class SampleFailed(Exception):
    """Outcome: this sample failed; ``metadata`` (e.g. a log tail) is kept in the result."""

    def __init__(self, message: str, metadata: Mapping[str, Any] | None = None):
        super().__init__(message)
        self.metadata = dict(metadata or {})


@dataclass(frozen=True)
class Generated:
    """Outcome: the output arrays of one sample plus metadata recorded with its result."""

    outputs: Mapping[str, Any]
    metadata: Mapping[str, Any] = field(default_factory=dict)
