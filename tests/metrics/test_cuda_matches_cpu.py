"""On a CUDA device, the metrics and the I3D features agree with the CPU / float64 reference.

These tests run only where ``torch.cuda.is_available()`` (the project's CI has no GPU; they are run
on a lent accelerator, see docs/performance.md "GPU"). They check the GPU path against the same
references the CPU path is held to: the float64 numpy implementation of the reference and temporal
metrics (docs/metrics.md tolerances), and the CPU forward pass of I3D.
"""

from __future__ import annotations

import numpy as np
import pytest

torch = pytest.importorskip("torch")

pytestmark = pytest.mark.skipif(not torch.cuda.is_available(), reason="needs a CUDA device")

from tests.features._weights import require_i3d_weights  # noqa: E402
from tests.metrics.test_torch_path_matches_numpy_reference import (  # noqa: E402
    _natural_pair,
    _sample,
    assert_reference_metrics_match_numpy,
)
from wfeval.metrics.temporal import Flicker, FrameRepeatRate, MotionMagnitude  # noqa: E402
from wfeval.storage.artifacts import ArtifactStore  # noqa: E402

I3D_FEATURE_REL = 1e-3  # float32 cuDNN against float32 oneDNN, TF32 off (reproducible_math)
FVD_REL = 1e-3


def test_reference_metrics_on_cuda_match_the_float64_numpy_path(tmp_path):
    gen, ref = _natural_pair(shape=(9, 96, 80, 3))
    request, result = _sample(ArtifactStore(tmp_path), gen, ref)
    assert_reference_metrics_match_numpy(request, result, "cuda")


def test_temporal_metrics_on_cuda_match_the_float64_numpy_path(tmp_path):
    gen, _ = _natural_pair(3)
    gen[3] = gen[2]
    request, result = _sample(ArtifactStore(tmp_path), gen, gen)
    for cls in (Flicker, MotionMagnitude, FrameRepeatRate):
        fast = cls(device="cuda").compute_sample(request, result)
        slow = cls(device="numpy").compute_sample(request, result)
        np.testing.assert_allclose(fast.components["per_step"], slow.components["per_step"], rtol=1e-6, atol=1e-7)


def test_i3d_features_and_fvd_on_cuda_match_the_cpu(capsys):
    require_i3d_weights()
    from wfeval.features.extractor import I3DExtractor
    from wfeval.features.preprocess import ClipRecipe
    from wfeval.features.weights import resolve_weights
    from wfeval.functional import fvd

    rng = np.random.default_rng(0)
    clips = list(rng.integers(0, 256, (6, 16, 64, 64, 3), dtype=np.uint8))
    info, recipe = resolve_weights(), ClipRecipe()
    on_cpu = I3DExtractor(info, recipe, device="cpu", batch_size=3).features(clips)
    on_cuda = I3DExtractor(info, recipe, device="cuda", batch_size=6).features(clips)
    rel = np.abs(on_cuda - on_cpu).max() / np.abs(on_cpu).max()
    real, generated = clips[:3] + [np.roll(c, 1, axis=1) for c in clips[3:]], clips[3:] + clips[:3]
    fvd_cpu = fvd(real, generated, device="cpu", progress="off").value
    fvd_cuda = fvd(real, generated, device="cuda", progress="off").value
    with capsys.disabled():
        print(f"\nI3D features cuda vs cpu: max relative difference {rel:.2e}; "
              f"FVD cpu {fvd_cpu!r} cuda {fvd_cuda!r} (relative {abs(fvd_cuda - fvd_cpu) / fvd_cpu:.2e})")
    assert rel <= I3D_FEATURE_REL
    assert fvd_cuda == pytest.approx(fvd_cpu, rel=FVD_REL)


LPIPS_REL = 1e-4  # float32 cuDNN against float32 oneDNN, TF32 off (load_lpips)


def test_lpips_on_cuda_matches_the_cpu(tmp_path):
    from tests.features._lpips import write_test_weights
    from wfeval.features.lpips_weights import resolve_lpips_weights
    from wfeval.functional import lpips

    gen, ref = _natural_pair(shape=(6, 64, 80, 3))
    for net in ("alex", "vgg"):
        weights = resolve_lpips_weights(net, *map(str, write_test_weights(tmp_path, net)))
        on_cpu = lpips(torch.from_numpy(gen), torch.from_numpy(ref), per_frame=True, weights=weights)
        on_cuda = lpips(torch.from_numpy(gen).cuda(), torch.from_numpy(ref).cuda(), per_frame=True, weights=weights)
        assert on_cuda.device.type == "cuda"
        np.testing.assert_allclose(on_cuda.cpu().double().numpy(), on_cpu.double().numpy(), rtol=LPIPS_REL, atol=1e-7)
