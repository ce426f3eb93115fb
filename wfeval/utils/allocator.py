"""Keep freed heap memory for reuse in a run's process instead of handing it back to the kernel.

Large numeric temporaries (I3D activations, decoded frames, SSIM maps) are allocated and freed
over and over. With glibc's defaults each of them is a fresh ``mmap`` or a heap that is trimmed
after every free, so every reuse faults its pages in again: on the realistic run
(docs/performance.md) 6 s of the 30 s were the kernel's (``sys``), ~50 000 page faults per I3D
forward pass. Raising glibc's thresholds when a run starts (the CLI's job function, so also in a
launcher's worker processes): trim at 1 GiB, 64 MiB of top pad, ``mmap`` only above 32 MiB, its
largest. That keeps the memory in the heap: ``sys`` 1.6–2.1 s, the run 7–14 % faster, peak RSS
unchanged. The same effect the ``MALLOC_*_`` environment variables give; they,
``GLIBC_TUNABLES`` or a preloaded allocator (jemalloc, tcmalloc) are left alone.
"""

from __future__ import annotations

import os
import sys

M_TRIM_THRESHOLD, M_TOP_PAD, M_MMAP_THRESHOLD = -1, -2, -3  # <malloc.h>
SETTINGS = ((M_TRIM_THRESHOLD, 1 << 30), (M_TOP_PAD, 64 << 20), (M_MMAP_THRESHOLD, 32 << 20))


def _chosen_by_the_user(environ: dict[str, str]) -> bool:
    return (any(key.startswith("MALLOC_") for key in environ) or "malloc" in environ.get("GLIBC_TUNABLES", "")
            or any(name in environ.get("LD_PRELOAD", "") for name in ("jemalloc", "tcmalloc", "mimalloc")))


def keep_freed_memory(environ: dict[str, str] | None = None) -> bool:
    """Apply :data:`SETTINGS` through glibc's ``mallopt``; False (nothing changed) off glibc Linux,
    when the user chose the allocator's settings, or when glibc refuses one."""
    if not sys.platform.startswith("linux") or _chosen_by_the_user(dict(os.environ if environ is None else environ)):
        return False
    import ctypes

    try:
        mallopt = ctypes.CDLL("libc.so.6").mallopt
    except (OSError, AttributeError):  # musl and others: no such library or function
        return False
    mallopt.argtypes, mallopt.restype = (ctypes.c_int, ctypes.c_int), ctypes.c_int
    return all([mallopt(param, value) == 1 for param, value in SETTINGS])
