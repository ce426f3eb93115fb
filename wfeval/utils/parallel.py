"""Work on every CPU core: independent pieces on a thread pool, one BLAS / torch thread each.

On a busy machine, small numeric kernels scale far better this way than with each library's own
intra-op threads, whose barriers wait on every small operation (measured in docs/performance.md:
SSIM of 16 frames 0.65 s against 13 s with 2 torch threads on a loaded 2-core machine).
"""

from __future__ import annotations

import contextlib
import functools
import os
from concurrent.futures import ThreadPoolExecutor
from typing import Any, Callable, Iterator


def _workers(workers: int | None, n: int) -> int:
    return max(1, min(workers or os.cpu_count() or 1, n or 1))


def map_blas(fn: Callable[[Any], Any], items: list, *, workers: int | None = None) -> list:
    """``[fn(x) for x in items]`` on a thread pool, BLAS limited to one thread per worker."""
    workers = _workers(workers, len(items))
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover - a declared dependency; without it, BLAS's own threads
        return [fn(x) for x in items]
    with threadpool_limits(limits=1, user_api="blas"):
        if workers == 1:
            return [fn(x) for x in items]
        with ThreadPoolExecutor(workers) as pool:
            return list(pool.map(fn, items))


@functools.lru_cache(maxsize=1)
def _blas_controller() -> Any:
    import numpy  # noqa: F401 - its BLAS loaded first: a controller made before it finds no library, for good
    from threadpoolctl import ThreadpoolController

    return ThreadpoolController()  # the libraries loaded now (numpy's BLAS); 0.7 ms each time it is built


@contextlib.contextmanager
def one_blas_thread() -> Iterator[None]:
    """BLAS (numpy's) limited to one thread inside the block, the previous counts restored after: for
    decompositions and products whose library threads wait on each other on a busy machine (an
    eigendecomposition of a 1056×1056 kernel took 18.8 s with OpenBLAS's 2 threads beside other work
    against 0.4 s on one, docs/performance.md). Values: a product is the same on any count of threads;
    a decomposition above ~100 wide may differ in its last bits, as between two machines."""
    try:
        limit = _blas_controller().limit(limits=1, user_api="blas")
    except ImportError:  # pragma: no cover - a declared dependency; without it, BLAS's own threads
        yield
        return
    with limit:
        yield


def map_torch_cpu(fn: Callable[[Any], Any], items: list, *, workers: int | None = None) -> list:
    """``[fn(x) for x in items]`` for torch work on the CPU: one torch thread per worker, one worker
    per core."""
    workers = _workers(workers, len(items))
    if workers == 1 or len(items) < 2:
        return [fn(x) for x in items]
    with one_torch_thread(), ThreadPoolExecutor(workers) as pool:
        return list(pool.map(fn, items))


@contextlib.contextmanager
def one_torch_thread() -> Iterator[None]:
    """torch limited to one intra-op thread inside the block (the previous count restored after)."""
    import torch

    previous = torch.get_num_threads()
    if previous == 1:
        yield
        return
    torch.set_num_threads(1)
    try:
        yield
    finally:
        torch.set_num_threads(previous)
