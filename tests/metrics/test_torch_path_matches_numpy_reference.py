"""Reference and temporal metrics compute on torch (float32, the run's device) and agree with the
float64 numpy reference implementation within the tolerances stated in docs/metrics.md."""

from __future__ import annotations

import numpy as np
import pytest

from tests.functional.test_ssim_psnr_match_scikit_image import gridworld_pair
from wfeval.api import GenerationRequest, GenerationResult
from wfeval.metrics.reference import MAE, MSE, PSNR, SSIM
from wfeval.metrics.temporal import Flicker, FrameRepeatRate, MotionMagnitude
from wfeval.storage.artifacts import ArtifactStore

SSIM_TOL, PSNR_TOL_DB, OTHER_REL = 1e-5, 1e-4, 1e-6


def _natural_pair(seed: int = 0, shape=(6, 48, 40, 3)):
    """Smooth content plus noise, as a lossy codec leaves it; the prediction is shifted and noisier."""
    rng = np.random.default_rng(seed)
    t, h, w, _ = shape
    yy, xx = np.mgrid[0:h, 0:w]
    base = np.stack([128 + 60 * np.sin((xx + 3 * f) / 7.0) * np.cos(yy / 5.0) for f in range(t)])[..., None]
    ref = np.clip(base + rng.normal(0, 6, shape), 0, 255).astype(np.uint8)
    gen = np.clip(np.roll(base, 1, axis=2) + rng.normal(0, 9, shape), 0, 255).astype(np.uint8)
    return gen, ref


def _sample(store, gen, ref):
    request = GenerationRequest(sample_id="s0", references={"video": store.put_array(ref, kind="video")})
    return request, GenerationResult(sample_id="s0", artifacts={"generated_video": store.put_array(gen, kind="video")})


def assert_reference_metrics_match_numpy(request, result, device: str) -> None:
    """SSIM, PSNR, MSE and MAE on ``device`` against the float64 numpy path, within the stated tolerances."""
    for cls, tol in ((SSIM, SSIM_TOL), (PSNR, PSNR_TOL_DB), (MSE, None), (MAE, None)):
        fast = cls(device=device).compute_sample(request, result)
        slow = cls(device="numpy").compute_sample(request, result)
        assert fast.status == slow.status == "ok"
        a, b = np.array(fast.components["per_frame"]), np.array(slow.components["per_frame"])
        if tol is None:  # uint8 differences summed exactly in int64
            np.testing.assert_allclose(a, b, rtol=OTHER_REL)
            assert fast.raw_value == pytest.approx(slow.raw_value, rel=OTHER_REL)
        else:
            assert np.abs(a - b).max() <= tol and abs(fast.raw_value - slow.raw_value) <= tol


@pytest.mark.parametrize("pair", ["natural", "gridworld", "identical"])
def test_reference_metrics_on_torch_match_the_float64_numpy_path(tmp_path, pair):
    gen, ref = {"natural": _natural_pair, "gridworld": lambda: gridworld_pair(48, 56),
                "identical": lambda: (_natural_pair()[1],) * 2}[pair]()
    request, result = _sample(ArtifactStore(tmp_path), gen, ref)
    assert_reference_metrics_match_numpy(request, result, "cpu")
    if pair == "identical":
        assert PSNR(device="cpu").compute_sample(request, result).components["frames_capped"] == 6


def test_temporal_metrics_on_torch_match_the_float64_numpy_path(tmp_path):
    gen, _ = _natural_pair(3)
    gen[3] = gen[2]  # one repeated frame
    gen[5] = np.clip(gen[4].astype(int) + 1, 0, 255)  # a step of exactly one level: the repeat threshold
    request, result = _sample(ArtifactStore(tmp_path), gen, gen)
    for cls in (Flicker, MotionMagnitude, FrameRepeatRate):
        fast = cls(device="cpu").compute_sample(request, result)
        slow = cls(device="numpy").compute_sample(request, result)
        np.testing.assert_allclose(fast.components["per_step"], slow.components["per_step"], rtol=1e-6, atol=1e-7)
    repeat = FrameRepeatRate(device="cpu").compute_sample(request, result).components["per_step"]
    assert repeat[2] == 1.0 and repeat[0] == 0.0


def test_run_device_reaches_every_metric_that_takes_one(tmp_path):
    from tests.config.test_compose import compose
    from wfeval.pipeline import build
    from wfeval.pipeline.metric_nodes import metric_nodes

    cfg = compose(["metric=[psnr,ssim,flicker,fvd,artifact_count]", "run.device=cpu"])
    metrics = build.build_metrics(metric_nodes(cfg), device=cfg.run.device)
    assert {m: getattr(metrics[m], "device", None) for m in metrics} == {
        "psnr": "cpu", "ssim": "cpu", "flicker": "cpu", "fvd": "cpu", "artifact_count": None}
    own = build.build_metrics(metric_nodes(compose(["metric=[fvd]", "metric.fvd.device=numpy_is_not_a_device"])),
                              device="cpu")
    assert own["fvd"].device == "numpy_is_not_a_device"  # a metric's own setting wins over run.device


def test_an_unknown_device_is_refused_when_the_metric_is_built():
    with pytest.raises(ValueError, match="run.device"):
        SSIM(device="tpu:7")


def _extreme_pair(shape=(3, 96, 80, 3)):
    """Every level difference up to 255 (all-black against all-white frames: the largest integer sums)."""
    rng = np.random.default_rng(5)
    gen = rng.integers(0, 256, shape, dtype=np.uint8)
    ref = np.zeros(shape, np.uint8)
    gen[0], ref[0] = 255, 0
    return gen, ref


@pytest.mark.parametrize("pair", ["natural", "extreme", "identical"])
def test_exact_metrics_score_uint8_videos_with_numpy_under_auto_to_the_torch_paths_last_bit(tmp_path, pair):
    """psnr, mse and mae sum uint8 differences exactly on every device: under ``auto`` they score uint8 videos
    with numpy (no torch import for a run that needs it for nothing else) and every value is the torch path's."""
    gen, ref = {"natural": _natural_pair, "extreme": _extreme_pair,
                "identical": lambda: (_natural_pair()[1],) * 2}[pair]()
    request, result = _sample(ArtifactStore(tmp_path), gen, ref)
    for metric in (PSNR(), PSNR(average="mse"), MSE(), MAE()):
        assert metric.device == "auto" and metric.on_host(gen, ref) and not metric.needs_torch()
        host = metric.compute_sample(request, result)
        torch_cpu = type(metric)(**({"average": metric.average} if isinstance(metric, PSNR) else {}), device="cpu")
        assert not torch_cpu.on_host(gen, ref) and torch_cpu.needs_torch()
        on_torch = torch_cpu.compute_sample(request, result)
        assert host.status == on_torch.status == "ok"
        assert host.raw_value == on_torch.raw_value and host.components == on_torch.components
    if pair == "extreme":
        assert MSE().compute_sample(request, result).components["per_frame"][0] == 255.0 ** 2


def test_auto_keeps_float_videos_and_inexact_metrics_on_torch():
    gen, ref = _natural_pair()
    assert not PSNR().on_host(gen, ref.astype(np.float32))  # a float reference: float32 on the device, as before
    assert SSIM().needs_torch() and not SSIM().on_host(gen, ref)
    assert PSNR(device="numpy").on_host(gen, ref.astype(np.float32)) and not PSNR(device="numpy").needs_torch()


@pytest.mark.subprocess  # an import-laziness probe
def test_scoring_psnr_mse_and_mae_under_auto_never_imports_torch(tmp_path):
    import subprocess
    import sys

    code = ("import sys, numpy as np; from wfeval.api import GenerationRequest, GenerationResult; "
            "from wfeval.metrics.reference import MAE, MSE, PSNR; from wfeval.storage.artifacts import ArtifactStore; "
            "from wfeval.pipeline.overlap import missing_imports; "
            f"s = ArtifactStore({str(tmp_path)!r}); v = np.arange(4 * 8 * 8 * 3, dtype=np.uint8).reshape(4, 8, 8, 3); "
            "q = GenerationRequest(sample_id='s', references={'video': s.put_array(v, kind='video')}); "
            "r = GenerationResult(sample_id='s', "
            "artifacts={'generated_video': s.put_array(v[::-1].copy(), kind='video')}); "
            "ms = {'psnr': PSNR(), 'mse': MSE(), 'mae': MAE()}; "
            "assert missing_imports(ms) == [], missing_imports(ms); "
            "print([m.compute_sample(q, r).status for m in ms.values()], 'torch' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True)
    assert done.stdout.strip() == "['ok', 'ok', 'ok'] False", done.stderr
