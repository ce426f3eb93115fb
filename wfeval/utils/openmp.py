"""Idle OpenMP threads of a run's process sleep instead of spinning (``OMP_WAIT_POLICY=PASSIVE``).

torch's CPU kernels run on OpenMP threads (GNU libgomp in torch's wheels). Between two parallel
regions libgomp keeps its idle threads spinning on the CPU (up to 300 000 spins) so that the next
region starts a few microseconds sooner. A run has other threads that need those cores while
I3D's workers spin: the model's decoding thread, the reference reader, SSIM's pool, and on a
shared machine other processes. On the realistic run (docs/performance.md) the spinning cost
~17 of 40 core-seconds for 16 samples and the run 1.3–1.6× its wall time, beside other work
more. The wait policy only decides how an idle thread waits: every value is the same.

Set when a run starts (the CLI's job function, so also in a launcher's worker processes),
before torch is imported; it has no effect on a process that imported torch already (an
in-process call after torch was loaded, the in-training call) and it is inherited by the run's
child processes. ``OMP_WAIT_POLICY`` or ``GOMP_SPINCOUNT`` set by the user are left alone.
"""

from __future__ import annotations

import os
import sys


def idle_threads_sleep(environ: dict[str, str] | None = None) -> bool:
    """Set ``OMP_WAIT_POLICY=PASSIVE`` in ``environ`` (default ``os.environ``) for the OpenMP runtime
    torch will load; False (nothing changed) when the user chose a wait policy or a spin count, or
    when an OpenMP runtime may already be loaded (torch imported) and would not read it."""
    environ = os.environ if environ is None else environ
    if "OMP_WAIT_POLICY" in environ or "GOMP_SPINCOUNT" in environ or "torch" in sys.modules:
        return False
    environ["OMP_WAIT_POLICY"] = "PASSIVE"
    return True
