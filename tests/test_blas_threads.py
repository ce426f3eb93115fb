"""``one_blas_thread`` limits numpy's BLAS to one thread inside its block and restores the count after, even
when its first use in a process comes before numpy is imported."""

from __future__ import annotations

import json
import subprocess
import sys
import textwrap

import pytest

pytestmark = pytest.mark.subprocess  # a fresh interpreter: which libraries are loaded when is the point

PROBE = textwrap.dedent("""
    from wfeval.utils.parallel import one_blas_thread
    with one_blas_thread():  # the first use, numpy not imported yet
        pass
    import numpy
    from threadpoolctl import threadpool_info
    def blas():
        return sorted(i["num_threads"] for i in threadpool_info() if i["user_api"] == "blas")
    before = blas()
    with one_blas_thread():
        inside = blas()
    import json
    print(json.dumps([before, inside, blas()]))
""")


def test_one_blas_thread_limits_numpys_blas_even_when_first_used_before_numpy_is_imported():
    env = {"PATH": "/usr/bin:/bin", "OPENBLAS_NUM_THREADS": "2", "OMP_NUM_THREADS": "2", "MKL_NUM_THREADS": "2"}
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
    before, inside, after = json.loads(out.stdout)
    assert before == after == [2] and inside == [1], out.stdout
