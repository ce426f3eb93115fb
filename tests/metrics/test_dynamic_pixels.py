"""dynamic_psnr, dynamic_ssim and break_even_horizon: closed forms on constructed clips, agreement
with ssim where every pixel moves, and the built-in baselines ranked as designed on the gridworld."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import compose
from wfeval.functional import dynamic_mask, dynamic_psnr, dynamic_ssim, break_even_horizon, ssim
from wfeval.pipeline.runner import run_from_config


def _clip() -> np.ndarray:
    """4 frames of 24×24 grey (level 100) with a 4×4 white block moving 2 px right per frame."""
    clip = np.full((4, 24, 24, 3), 100, dtype=np.uint8)
    for t in range(4):
        clip[t, 10:14, 6 + 2 * t:10 + 2 * t] = 255
    return clip


def test_the_dynamic_mask_is_the_pixels_the_moving_block_ever_covers():
    mask = dynamic_mask(_clip(), tolerance=10)
    expected = np.zeros((24, 24), dtype=bool)
    expected[10:14, 6:16] = True  # columns 6..15: each is covered in some frame and bare in another
    assert (mask == expected).all() and mask.sum() == 40
    assert not dynamic_mask(np.repeat(_clip()[:1], 4, axis=0)).any()  # nothing moves: no dynamic pixel
    noisy = _clip().astype(np.int16)
    noisy[1, 0, 0] += 5  # a change of 5 levels is within tolerance 10
    assert not dynamic_mask(noisy, tolerance=10)[0, 0] and dynamic_mask(noisy, tolerance=4)[0, 0]


def test_dynamic_psnr_sees_only_the_error_on_moving_pixels():
    target = _clip()
    mask = dynamic_mask(target, 10)
    background_wrong = target.copy()
    background_wrong[:, :5] = 0  # a large error on static pixels only
    assert (dynamic_psnr(background_wrong, target, mask) == 100.0).all()  # capped: the moving pixels are exact
    block_off = target.astype(np.float64)
    block_off[:, mask] += 10.0  # 10 levels off on every moving pixel, every channel
    expected = 10 * np.log10(255.0**2 / 100.0)
    assert np.allclose(dynamic_psnr(block_off, target, mask), expected, atol=1e-12)
    # the same error on 40 of 576 pixels: the all-pixel PSNR is higher by 10·log10(576/40)
    all_pixels = dynamic_psnr(block_off, target, np.ones((24, 24), dtype=bool))
    assert np.allclose(all_pixels - expected, 10 * np.log10(576 / 40), atol=1e-12)


def test_dynamic_ssim_equals_ssim_when_every_pixel_moves_and_is_one_on_exact_frames():
    rng = np.random.default_rng(0)
    target = rng.integers(0, 256, size=(3, 24, 24, 3), dtype=np.uint8)
    preds = np.clip(target.astype(np.int16) + rng.integers(-20, 21, size=target.shape), 0, 255).astype(np.uint8)
    everything = np.ones((24, 24), dtype=bool)
    assert np.allclose(dynamic_ssim(preds, target, everything), ssim(preds, target, per_frame=True), atol=1e-12)
    clip = _clip()
    assert np.allclose(dynamic_ssim(clip, clip, dynamic_mask(clip, 10)), 1.0)
    held = np.repeat(clip[:1], 4, axis=0)
    assert (dynamic_ssim(held, clip, dynamic_mask(clip, 10))[1:] < 0.9).all()


def test_break_even_horizon_counts_the_leading_frames_that_beat_holding_the_first():
    target = _clip()
    held = target[0]
    assert break_even_horizon(target[1:], target[1:], held) == (3, True)  # exact throughout: censored
    assert break_even_horizon(np.repeat(held[None], 3, axis=0), target[1:], held) == (0, False)  # the static model
    late = target[1:].copy()
    late[2] = held  # exact for two frames, then holds: breaks even at the third
    assert break_even_horizon(late, target[1:], held) == (2, False)
    still = np.repeat(target[:1], 3, axis=0)  # nothing moves: a perfect hold is no break-even for a perfect model
    assert break_even_horizon(still, still, held) == (3, True)


@pytest.fixture(scope="module")
def baselines(tmp_path_factory):
    root = tmp_path_factory.mktemp("dynamic")
    out = {}
    for model in ("oracle", "static", "random_actions", "noisy"):
        cfg = compose([f"run.store_dir={root / 'store'}", "run.progress=off", "benchmark.num_samples=8",
                       "metric=[psnr,ssim,dynamic_psnr,dynamic_ssim,break_even_horizon]", f"model={model}"])
        summary = run_from_config(cfg, output_dir=root / model)
        out[model] = {k.split(".", 1)[1]: a.diagnostics["value"] for k, a in summary.results.items()}
        assert all(a.n_valid == 8 for a in summary.results.values())
    return out


def test_the_baselines_rank_as_designed_and_static_is_exposed_on_the_moving_pixels(baselines):
    oracle, static, wrong = baselines["oracle"], baselines["static"], baselines["random_actions"]
    assert oracle["dynamic_psnr"] == 100.0 and oracle["dynamic_ssim"] == 1.0 and oracle["break_even_horizon"] == 15
    assert static["break_even_horizon"] == 0.0
    assert 0 < wrong["break_even_horizon"] < 15
    for metric in ("dynamic_psnr", "dynamic_ssim"):
        assert oracle[metric] > wrong[metric] > static[metric]
    # holding the first frame looks good on all pixels and poor where the world moves
    assert static["psnr"] - static["dynamic_psnr"] > 5.0 and static["ssim"] - static["dynamic_ssim"] > 0.15
    # noise is spread evenly over the frame: the dynamic-pixel PSNR is the all-pixel one within 1 dB
    assert abs(baselines["noisy"]["psnr"] - baselines["noisy"]["dynamic_psnr"]) < 1.0
