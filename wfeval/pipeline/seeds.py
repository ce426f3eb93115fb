"""One recorded generation seed per sample (``run.seed``, ``run.seed_mode``)."""

from __future__ import annotations

import dataclasses
import hashlib
from typing import Any

from wfeval.api import GenerationRequest
from wfeval.config.run_config import SEED_MODES


def sample_seed(base: Any, sample_id: str) -> int:
    """A 31-bit seed from a base seed and a sample id: stable, independent of order and batching."""
    digest = hashlib.sha256(f"{base}/{sample_id}".encode()).digest()
    return int.from_bytes(digest[:4], "little") & 0x7FFFFFFF


def check_seed_mode(mode: str) -> None:
    if mode not in SEED_MODES:
        raise ValueError(f"run.seed_mode: {mode!r} is not one of {', '.join(SEED_MODES)}")


def seeded_request(request: GenerationRequest, *, seed: int, mode: str) -> GenerationRequest:
    """The request with its generation seed in ``generation["seed"]`` (recorded with the request).

    ``per_sample``: derived from ``run.seed``, the request's own seed (the task's
    ``generation_defaults.seed``, if any) and the sample id; ``fixed``: the request's own seed,
    else ``run.seed``, for every sample.
    """
    check_seed_mode(mode)
    own = request.generation.get("seed")
    value = sample_seed(f"{seed}/{own}", request.sample_id) if mode == "per_sample" else \
        (own if own is not None else seed)
    return dataclasses.replace(request, generation={**request.generation, "seed": value})
