"""A run's process keeps freed heap memory for reuse (glibc), unless the user chose the allocator."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from wfeval.utils.allocator import keep_freed_memory

pytestmark = pytest.mark.subprocess  # the allocator settings of a fresh process

PROBE = textwrap.dedent("""
    import resource, sys
    import numpy as np
    if sys.argv[1] == "tuned":
        from wfeval.utils.allocator import keep_freed_memory
        assert keep_freed_memory()
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for _ in range(40):  # what a run does with frames and activations: allocate, use, free, again
        a, b = np.ones(6_000_000), np.ones(3_000_000)
        del a, b
    print(resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before)
""")


def _faults(mode: str) -> int:
    env = {"PATH": "/usr/bin:/bin"}  # no MALLOC_* from the caller's environment
    out = subprocess.run([sys.executable, "-c", PROBE, mode], capture_output=True, text=True, env=env, check=True)
    return int(out.stdout.strip())


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="glibc's mallopt")
def test_reused_arrays_stop_faulting_their_pages_in_again():
    default, tuned = _faults("default"), _faults("tuned")
    if default < 2_000:  # pragma: no cover - a kernel that backs fresh mappings with huge pages
        pytest.skip(f"only {default} page faults without the settings: nothing to compare")
    assert tuned * 5 < default  # here: ~40 000 (72 MB faulted in again each round) against ~2 700


@pytest.mark.parametrize("environ", [{"MALLOC_ARENA_MAX": "2"}, {"GLIBC_TUNABLES": "glibc.malloc.trim_threshold=1"},
                                     {"LD_PRELOAD": "/usr/lib/x86_64-linux-gnu/libjemalloc.so.2"}])
def test_an_allocator_the_user_configured_is_left_alone(environ):
    assert keep_freed_memory(environ) is False
