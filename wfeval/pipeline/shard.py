"""Deterministic, disjoint, contiguous slices of a benchmark's samples (``run.shard=i/n``).

Shard ``i`` of ``n`` holds samples ``[floor(i*N/n), floor((i+1)*N/n))``: concatenating the
shards in order gives back the unsharded sample order, so merged results equal the single run's.
"""

from __future__ import annotations

from typing import Sequence, TypeVar

from wfeval.config.run_config import parse_shard

T = TypeVar("T")


def shard_bounds(total: int, shard: str | None) -> tuple[int, int]:
    """``[start, stop)`` of shard ``i/n`` among ``total`` samples (all of them without a shard)."""
    if shard is None:
        return 0, total
    index, count = parse_shard(shard)
    return index * total // count, (index + 1) * total // count


def shard_slice(items: Sequence[T], shard: str | None) -> list[T]:
    start, stop = shard_bounds(len(items), shard)
    return list(items[start:stop])
