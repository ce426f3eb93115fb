"""ssim and psnr agree with scikit-image per frame, on random and real-looking videos of many sizes."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from wfeval.benchmarks.gridworld import world
from wfeval.functional import mae, mse, psnr, ssim

skm = pytest.importorskip("skimage.metrics")
TOL = 1e-4


def sk_ssim(a: np.ndarray, b: np.ndarray, data_range: float) -> np.ndarray:
    return np.array([skm.structural_similarity(a[t], b[t], gaussian_weights=True, sigma=1.5,
                                               use_sample_covariance=False, data_range=data_range, channel_axis=-1)
                     for t in range(a.shape[0])])


def sk_psnr(a: np.ndarray, b: np.ndarray, data_range: float) -> np.ndarray:
    return np.array([skm.peak_signal_noise_ratio(b[t], a[t], data_range=data_range) for t in range(a.shape[0])])


def random_pair(shape, seed=0):
    rng = np.random.default_rng(seed)
    a = rng.integers(0, 256, shape, dtype=np.uint8)
    b = np.clip(a.astype(int) + rng.integers(-60, 61, shape), 0, 255).astype(np.uint8)
    return a, b


def gridworld_pair(height=64, width=64, seed=3, frames=8):
    """Reference rollout vs the same world under other actions: a real-looking prediction error."""
    spec = world.WorldSpec(height=height, width=width, cell=8, n_walls=4, n_objects=2)
    state = world.initial_state(seed, spec)
    a, _ = world.rollout(state, world.sample_actions(seed, frames - 1))
    b, _ = world.rollout(state, world.sample_actions(seed + 7, frames - 1))
    return a, b


def crop_gray(video: np.ndarray, h: int, w: int) -> np.ndarray:
    gray = video[:, :h, :w].astype(np.float64) @ np.array([0.299, 0.587, 0.114])
    return np.rint(gray)[..., None].astype(np.uint8)


RANDOM_SHAPES = [(3, 64, 64, 3), (2, 37, 53, 1), (2, 11, 11, 3), (2, 100, 71, 3), (1, 13, 200, 2), (1, 161, 97, 3)]


def real_looking():
    a, b = gridworld_pair()
    yield "gridworld 64x64", a, b
    a, b = gridworld_pair(48, 96, seed=11)
    yield "gridworld 48x96", a, b
    a, b = gridworld_pair(136, 80, seed=5)
    yield "gridworld 136x80", a, b
    yield "gridworld 1-channel 61x57", crop_gray(a, 61, 57), crop_gray(b, 61, 57)


def all_pairs():
    for shape in RANDOM_SHAPES:
        yield pytest.param(*random_pair(shape), id=f"random-{'x'.join(map(str, shape))}")
    for name, a, b in real_looking():
        yield pytest.param(a, b, id=name.replace(" ", "-"))


@pytest.mark.parametrize("a,b", list(all_pairs()))
def test_ssim_matches_scikit_image_per_frame_on_numpy_and_torch(a, b):
    expected = sk_ssim(a, b, 255)
    assert np.abs(ssim(a, b, per_frame=True) - expected).max() < 1e-10  # numpy: float64
    t64 = ssim(torch.from_numpy(a).double(), torch.from_numpy(b).double(), data_range=255, per_frame=True)
    assert np.abs(t64.numpy() - expected).max() < 1e-10
    t32 = ssim(torch.from_numpy(a), torch.from_numpy(b), per_frame=True)  # uint8 tensor: float32
    assert t32.dtype == torch.float32 and np.abs(t32.numpy() - expected).max() < 1e-5
    assert abs(float(ssim(a, b)) - expected.mean()) < TOL


@pytest.mark.parametrize("a,b", list(all_pairs()))
def test_psnr_matches_scikit_image_per_frame(a, b):
    with np.errstate(divide="ignore"):
        expected = sk_psnr(a, b, 255)  # inf where frames are identical (the initial frame)
    np.testing.assert_allclose(psnr(a, b, per_frame=True), expected, rtol=0, atol=TOL)
    np.testing.assert_allclose(psnr(torch.from_numpy(a), torch.from_numpy(b), per_frame=True).numpy(), expected,
                               rtol=0, atol=TOL)
    np.testing.assert_allclose(float(psnr(a, b)), expected.mean(), rtol=0, atol=TOL)


def test_float_videos_in_unit_range_give_the_same_values_with_data_range_1():
    a, b = gridworld_pair()
    fa, fb = a / 255.0, b / 255.0
    assert np.abs(ssim(fa, fb, data_range=1.0, per_frame=True) - sk_ssim(fa, fb, 1.0)).max() < 1e-10
    np.testing.assert_allclose(psnr(fa, fb, data_range=1.0, per_frame=True), psnr(a, b, per_frame=True),
                               rtol=0, atol=1e-9)


def test_batched_input_gives_one_value_per_video_and_the_same_curves():
    pairs = [random_pair((4, 24, 30, 3), seed=s) for s in range(3)]
    a, b = np.stack([p[0] for p in pairs]), np.stack([p[1] for p in pairs])
    for fn in (ssim, psnr, mse, mae):
        curves = fn(a, b, per_frame=True)
        assert curves.shape == (3, 4)
        for i, (x, y) in enumerate(pairs):
            np.testing.assert_allclose(curves[i], fn(x, y, per_frame=True), rtol=0, atol=1e-12)
        np.testing.assert_allclose(fn(a, b), curves.mean(axis=1), rtol=0, atol=1e-12)
        tcurves = fn(torch.from_numpy(a).double(), torch.from_numpy(b).double(), per_frame=True, **(
            {"data_range": 255} if fn in (ssim, psnr) else {}))
        np.testing.assert_allclose(tcurves.numpy(), curves, rtol=0, atol=1e-9)


def test_psnr_averages_per_frame_by_default_and_mean_mse_on_request():
    a = np.zeros((2, 16, 16, 3), np.uint8)
    b = a.copy()
    b[0] += 1  # frame 0: MSE 1; frame 1: MSE 100
    b[1] += 10
    per_frame = [10 * np.log10(255**2 / 1), 10 * np.log10(255**2 / 100)]
    assert float(psnr(a, b)) == pytest.approx(np.mean(per_frame), abs=1e-12)
    assert float(psnr(a, b, average="mse")) == pytest.approx(10 * np.log10(255**2 / 50.5), abs=1e-12)
    with pytest.raises(ValueError, match="average must be one of"):
        psnr(a, b, average="median")


def test_identical_frames_give_infinite_psnr_unless_capped():
    a = np.full((3, 12, 12, 3), 7, np.uint8)
    b = a.copy()
    b[2] = 9
    curve = psnr(a, b, per_frame=True)
    assert np.isinf(curve[:2]).all() and np.isfinite(curve[2])
    capped = psnr(a, b, per_frame=True, max_db=100.0)
    assert list(capped[:2]) == [100.0, 100.0] and capped[2] == curve[2]
    assert float(psnr(a, b, max_db=100.0)) == pytest.approx((200.0 + curve[2]) / 3)
    tcurve = psnr(torch.from_numpy(a), torch.from_numpy(b), per_frame=True, max_db=100.0)
    assert tcurve[:2].tolist() == [100.0, 100.0]


def test_mse_and_mae_have_closed_forms_for_a_constant_offset():
    a = np.full((2, 9, 7, 1), 100, np.uint8)
    assert float(mse(a + 3, a)) == 9.0 and float(mae(a, a + 3)) == 3.0
    assert float(mse(torch.from_numpy(a), torch.from_numpy(a + 4))) == 16.0


def test_ssim_of_a_video_with_itself_is_one_and_ranks_degradation():
    a, _ = gridworld_pair()
    assert float(ssim(a, a)) == pytest.approx(1.0, abs=1e-12)
    rng = np.random.default_rng(1)
    noisy = [np.clip(a + rng.normal(0, s, a.shape), 0, 255).astype(np.uint8) for s in (2, 8, 32)]
    scores = [float(ssim(n, a)) for n in noisy]
    assert scores == sorted(scores, reverse=True) and scores[-1] < 0.5
