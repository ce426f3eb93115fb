"""A run's idle OpenMP threads sleep instead of spinning, with the same values, unless the user chose."""

from __future__ import annotations

import subprocess
import sys
import textwrap

import pytest

from wfeval.utils.openmp import idle_threads_sleep

pytestmark = pytest.mark.subprocess  # the OpenMP runtime reads its settings once, when torch loads it

PROBE = textwrap.dedent("""
    import hashlib, sys
    from wfeval.utils.openmp import idle_threads_sleep
    print(idle_threads_sleep())
    import torch
    torch.set_num_threads(2)
    g = torch.Generator().manual_seed(0)
    x, w = torch.randn(2, 3, 8, 32, 32, generator=g), torch.randn(8, 3, 3, 3, 3, generator=g)
    with torch.inference_mode():  # a 3-D convolution, as in I3D, on two OpenMP threads
        y = torch.relu(torch.nn.functional.conv3d(x, w, padding=1)).sum(dim=(2, 3, 4))
    print(hashlib.sha256(y.numpy().tobytes()).hexdigest())
""")


def _run(environ: dict[str, str]) -> tuple[bool, str, str]:
    env = {"PATH": "/usr/bin:/bin", "OMP_DISPLAY_ENV": "VERBOSE", **environ}  # libgomp prints its settings
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, env=env, check=True)
    changed, digest = out.stdout.split()
    return changed == "True", digest, out.stderr


def test_idle_openmp_threads_sleep_and_every_value_stays_the_same():
    pytest.importorskip("torch")
    changed, passive, shown = _run({})
    chose, active, shown_active = _run({"OMP_WAIT_POLICY": "ACTIVE"})  # the user's choice is kept
    assert changed and not chose
    assert passive == active  # the wait policy decides how a thread waits, never what it computes
    if "GOMP_SPINCOUNT" not in shown:  # pragma: no cover - an OpenMP runtime other than GNU libgomp
        pytest.skip("the OpenMP runtime does not display its settings")
    # an idle thread spins 0 times before it sleeps (libgomp's default with no policy set: 300 000)
    assert "GOMP_SPINCOUNT = '0'" in shown and "OMP_WAIT_POLICY = 'ACTIVE'" in shown_active


@pytest.mark.parametrize("environ", [{"OMP_WAIT_POLICY": "ACTIVE"}, {"GOMP_SPINCOUNT": "10000"}])
def test_a_wait_policy_the_user_chose_is_left_alone(environ):
    before = dict(environ)
    assert idle_threads_sleep(environ) is False and environ == before


def test_the_policy_is_not_set_where_the_runtime_was_loaded_already(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", object())
    environ: dict[str, str] = {}
    assert idle_threads_sleep(environ) is False and environ == {}
