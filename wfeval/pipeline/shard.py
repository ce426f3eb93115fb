"""Deterministic, disjoint, contiguous slices of a benchmark's samples (``run.shard=i/n``).

Shard ``i`` of ``n`` holds samples ``[floor(i*N/n), floor((i+1)*N/n))``: concatenating the
shards in order gives back the unsharded sample order, so merged results equal the single run's.
"""

from __future__ import annotations

import re
from typing import Sequence, TypeVar

T = TypeVar("T")
_SHARD = re.compile(r"^\s*(\d+)\s*/\s*(\d+)\s*$")


def parse_shard(text: str) -> tuple[int, int]:
    match = _SHARD.match(str(text))
    if not match:
        raise ValueError(f"run.shard: expected 'i/n' (e.g. 0/4), got {text!r}")
    index, count = int(match.group(1)), int(match.group(2))
    if count < 1 or not 0 <= index < count:
        raise ValueError(f"run.shard: need 0 <= i < n and n >= 1, got {index}/{count}")
    return index, count


def shard_bounds(total: int, shard: str | None) -> tuple[int, int]:
    """``[start, stop)`` of shard ``i/n`` among ``total`` samples (all of them without a shard)."""
    if shard is None:
        return 0, total
    index, count = parse_shard(shard)
    return index * total // count, (index + 1) * total // count


def shard_slice(items: Sequence[T], shard: str | None) -> list[T]:
    start, stop = shard_bounds(len(items), shard)
    return list(items[start:stop])
