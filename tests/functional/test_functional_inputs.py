"""The functional twins take numpy or torch, uint8 or float, and refuse ambiguous input clearly."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest
import torch

from tests.conftest import ROOT
from wfeval.functional import flicker, mae, mse, psnr, ssim


def video(shape=(3, 16, 16, 3), seed=0):
    return np.random.default_rng(seed).integers(0, 256, shape, dtype=np.uint8)


def test_numpy_in_numpy_out_and_torch_in_torch_out():
    a, b = video(), video(seed=1)
    assert isinstance(ssim(a, b), np.floating) and isinstance(psnr(a, b), np.floating)
    assert isinstance(psnr(a, b, per_frame=True), np.ndarray)
    out = ssim(torch.from_numpy(a), torch.from_numpy(b))
    assert isinstance(out, torch.Tensor) and out.ndim == 0


def test_float_input_needs_an_explicit_data_range():
    a = video() / 255.0
    for fn in (psnr, ssim):
        with pytest.raises(ValueError, match=r"data_range is required for float64 input \(1.0 for values in \[0, 1\]"):
            fn(a, a)
    with pytest.raises(ValueError, match="data_range must be > 0"):
        psnr(video(), video(), data_range=0)


def test_mismatched_or_malformed_inputs_are_refused_with_the_shapes():
    with pytest.raises(ValueError, match=r"shapes differ: \(3, 16, 16, 3\) vs \(3, 16, 15, 3\)"):
        mse(video(), video((3, 16, 15, 3)))
    with pytest.raises(ValueError, match="expected a T×H×W×C video or a B×T×H×W×C batch"):
        mae(video()[0], video()[0])
    with pytest.raises(TypeError, match="both be numpy arrays or both be torch tensors"):
        mse(video(), torch.from_numpy(video()))
    with pytest.raises(TypeError, match="expected a numpy array or torch tensor, got list"):
        flicker([[1, 2]])
    with pytest.raises(ValueError, match="at least 11×11"):
        ssim(video((2, 10, 40, 3)), video((2, 10, 40, 3)))


@pytest.mark.subprocess  # an import-laziness probe
def test_numpy_inputs_never_import_torch():
    code = (
        "import sys, numpy as np\n"
        "from wfeval.functional import psnr, ssim, mse, mae, flicker, motion_magnitude, frame_repeat_rate\n"
        "from wfeval.functional import action_following\n"
        "from wfeval.benchmarks.gridworld import world\n"
        "v, pos = world.rollout(world.initial_state(1), world.sample_actions(1, 5))\n"
        "[f(v, v[::-1]) for f in (psnr, ssim, mse, mae)]\n"
        "[f(v) for f in (flicker, motion_magnitude, frame_repeat_rate)]\n"
        "action_following(v, world.sample_actions(1, 5), pos)\n"
        "print('torch' in sys.modules)\n"
    )
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "False"
