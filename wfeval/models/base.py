"""The world-model contract the pipeline drives.

A model turns a batch of :class:`~wfeval.api.GenerationRequest` into one output mapping per
request (output key → uint8 array, e.g. ``{"generated_video": T×H×W×3}``). It never stores
files and never sees a metric: the pipeline stores the arrays and builds the results.
"""

from __future__ import annotations

from typing import Mapping, Protocol, Sequence, runtime_checkable

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.storage.artifacts import read_array


@runtime_checkable
class WorldModel(Protocol):
    """What a model must have: ``generate``. ``name`` (shown in results; the class name otherwise),
    ``version`` (part of the cache identity), ``batch_size``, ``fingerprint()``, ``setup()`` and
    ``close()`` are optional (see :mod:`wfeval.models.protocol`); the pipeline reads them once
    through :class:`wfeval.pipeline.model.ModelHandle`."""

    def generate(self, requests: Sequence[GenerationRequest]) -> Sequence[Mapping[str, np.ndarray]]:
        """One mapping of output arrays per request, in order. Raise to fail the whole batch."""
        ...


def initial_frame(request: GenerationRequest) -> np.ndarray:
    """The request's conditioning image (H×W×3 uint8)."""
    try:
        ref = request.inputs["image"]
    except KeyError:
        raise ValueError(f"sample {request.sample_id!r}: request has no 'image' input") from None
    return read_array(ref)


def actions_of(request: GenerationRequest) -> tuple[int, ...]:
    try:
        return tuple(int(a) for a in request.controls["actions"])
    except KeyError:
        raise ValueError(f"sample {request.sample_id!r}: request has no 'actions' control") from None
