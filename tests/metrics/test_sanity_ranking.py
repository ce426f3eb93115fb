"""wfeval's meta-evaluation: the built-in baselines, run through the real pipeline, must be ranked
by each metric the way the metric claims to measure. A metric that cannot rank these is broken.

Baselines (wfeval/benchmarks/gridworld/baselines.py): oracle (exact), static (first frame repeated),
random_actions (right dynamics, wrong actions), lagged (actions one step late), blur, and noisy at
σ = 4, 16, 64 uint8 levels.

LPIPS runs on test weights (a random backbone and random heads, tests/features/_lpips.py: the
ImageNet backbone cannot be downloaded here), so its ranking checks the metric's machinery
(per-frame distances of unit-normalised conv features), not the perceptual calibration of the
published network.
"""

from __future__ import annotations

import pytest

from tests.conftest import compose
from tests.features._lpips import lpips_test_overrides
from wfeval.pipeline.runner import run_from_config

SAMPLES = 8
METRICS = ("psnr", "ssim", "mse", "mae", "lpips", "flicker", "motion_magnitude", "frame_repeat_rate",
           "action_following", "agent_position_error")
MODELS = {
    "oracle": ["model=oracle"],
    "static": ["model=static"],
    "random_actions": ["model=random_actions"],
    "lagged": ["model=lagged"],
    "blur": ["model=blur"],
    "noisy4": ["model=noisy", "model.sigma=4"],
    "noisy16": ["model=noisy", "model.sigma=16"],
    "noisy64": ["model=noisy", "model.sigma=64"],
}
REFERENCE = {"psnr": True, "ssim": True, "mse": False, "mae": False, "lpips": False}  # metric → higher is better


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """model → metric id → aggregate value, all from real runs on the same 8 gridworld episodes."""
    root = tmp_path_factory.mktemp("sanity")
    out = {}
    for name, overrides in MODELS.items():
        cfg = compose([f"run.store_dir={root / 'store'}", "run.progress=off", f"benchmark.num_samples={SAMPLES}",
                       f"metric=[{','.join(METRICS)}]", *lpips_test_overrides(root / "lpips"), *overrides])
        summary = run_from_config(cfg, output_dir=root / name)
        out[name] = {}
        for key, agg in summary.results.items():
            assert agg.valid and agg.n_valid == SAMPLES, (name, key, agg.diagnostics)
            out[name][key.split(".", 1)[1]] = agg.diagnostics["value"]
    return out


def column(table, metric):
    return {model: values[metric] for model, values in table.items()}


@pytest.mark.parametrize("metric,higher", REFERENCE.items())
def test_oracle_is_strictly_best_on_every_reference_metric(table, metric, higher):
    values = column(table, metric)
    best = max(values, key=values.get) if higher else min(values, key=values.get)
    assert best == "oracle" and list(values.values()).count(values["oracle"]) == 1, values


def test_random_actions_is_worst_on_action_following_and_position_error(table):
    accuracy, error = column(table, "action_following"), column(table, "agent_position_error")
    assert min(accuracy, key=accuracy.get) == "random_actions", accuracy
    assert max(error, key=error.get) == "random_actions", error
    assert accuracy["random_actions"] < 0.4 and error["random_actions"] > 10.0


def test_random_actions_is_close_to_the_oracle_on_flicker(table):
    flicker = column(table, "flicker")
    assert abs(flicker["random_actions"] - flicker["oracle"]) < 0.003, flicker
    assert abs(flicker["noisy16"] - flicker["oracle"]) > 0.05  # "close" is tight: noise is far away


def test_static_is_best_on_flicker_but_poor_on_psnr_and_action_following(table):
    flicker, psnr, accuracy = column(table, "flicker"), column(table, "psnr"), column(table, "action_following")
    assert flicker["static"] == 1.0 and all(v < 1.0 for m, v in flicker.items() if m != "static"), flicker
    for better in ("oracle", "random_actions", "lagged", "blur", "noisy4"):
        assert psnr["static"] < psnr[better], psnr
    assert psnr["static"] < psnr["oracle"] - 50
    assert accuracy["static"] < 0.6 and all(accuracy[m] == 1.0 for m in ("oracle", "blur", "noisy4", "noisy16"))


def test_static_freezes_motion_and_repeats_every_frame(table):
    assert table["static"]["motion_magnitude"] == 0.0 and table["static"]["frame_repeat_rate"] == 1.0
    assert table["oracle"]["frame_repeat_rate"] < 0.1


@pytest.mark.parametrize("metric", ["psnr", "ssim", "mse", "mae", "lpips", "flicker", "motion_magnitude"])
def test_noisy_degrades_monotonically_with_sigma(table, metric):
    ladder = [table[m][metric] for m in ("oracle", "noisy4", "noisy16", "noisy64")]  # σ = 0, 4, 16, 64
    worse_is_lower = metric in ("psnr", "ssim", "flicker")
    assert ladder == sorted(ladder, reverse=worse_is_lower) and len(set(ladder)) == 4, ladder


def test_pixel_degradation_keeps_control_and_lag_loses_part_of_it(table):
    accuracy = column(table, "action_following")
    assert accuracy["blur"] == accuracy["noisy64"] == 1.0
    assert accuracy["random_actions"] < accuracy["lagged"] < accuracy["oracle"]


def test_lpips_sees_a_frozen_video_and_wrong_actions_as_further_than_blur_lag_or_light_noise(table):
    lpips = column(table, "lpips")
    assert lpips["oracle"] == 0.0
    for closer in ("lagged", "blur", "noisy4"):
        assert lpips[closer] < lpips["random_actions"] < lpips["static"], lpips
