"""The baselines on Memory Maze, through the pipeline: the oracle exact (PSNR 100, SSIM 1, pose
error 0) in open loop, step by step on long samples and in closed loop; the degraded baselines
ranked as designed on PSNR/SSIM and on pose_error; the CLI a user runs."""

from __future__ import annotations

import re

import pytest

from tests.conftest import MAZE_SMALL, compose, read_jsonl, run_cli
from wfeval.pipeline.runner import run_from_config

LIMIT = 2  # the first two samples of the one recorded trajectory
MODELS = {
    "oracle": ["model=oracle"],
    "static": ["model=static"],
    "random_actions": ["model=random_actions"],
    "lagged": ["model=lagged"],
    "blur": ["model=blur"],
    "noisy": ["model=noisy"],
}


def _run(maze_store, tmp, name, overrides, metrics=("psnr", "ssim", "pose_error")):
    # no report.html: nothing here reads it (the CLI test below writes one, as a user's run does)
    cfg = compose([f"run.store_dir={maze_store}", "run.progress=off", "run.report=false",
                   f"metric=[{','.join(metrics)}]", *overrides])
    summary = run_from_config(cfg, output_dir=tmp / name)
    values = {}
    for key, agg in summary.results.items():
        assert agg.valid and agg.n_valid == agg.n_total, (name, key, agg.diagnostics)
        values[key.split(".", 1)[1]] = agg.diagnostics["value"]
    return values, tmp / name


@pytest.fixture(scope="module")
def table(maze_store, tmp_path_factory):
    tmp = tmp_path_factory.mktemp("maze_baselines")
    return {name: _run(maze_store, tmp, name, [*MAZE_SMALL, f"run.limit={LIMIT}", "metric.pose_error.stride=8", *o])[0]
            for name, o in MODELS.items()}


def column(table, metric):
    return {model: values[metric] for model, values in table.items()}


def test_the_oracle_is_exact_and_strictly_best(table):
    assert table["oracle"] == {"psnr": 100.0, "ssim": 1.0, "pose_error": 0.0}
    for metric in ("psnr", "ssim"):
        values = column(table, metric)
        assert all(v < values["oracle"] for m, v in values.items() if m != "oracle"), values


def test_static_and_random_actions_are_far_below_on_psnr_and_ssim(table):
    psnr, ssim = column(table, "psnr"), column(table, "ssim")
    for bad in ("static", "random_actions"):
        assert psnr[bad] < 25 and ssim[bad] < 0.75, (psnr, ssim)
        assert psnr[bad] < psnr["blur"] and psnr[bad] < psnr["noisy"] and psnr[bad] < psnr["lagged"]


def test_pose_error_sees_geometry_not_pixel_quality(table):
    pose = column(table, "pose_error")
    assert pose["noisy"] < 0.05 and pose["blur"] < 0.05  # right pose, degraded pixels
    assert 0.1 < pose["lagged"] < pose["random_actions"]  # one step late: about one step's move
    assert pose["static"] > pose["lagged"] and pose["static"] > 0.5, pose


def test_long_samples_step_by_step_keep_the_oracle_exact_over_256_steps(maze_store, tmp_path):
    values, run_dir = _run(maze_store, tmp_path, "long", [
        "benchmark=memory_maze_long", "benchmark.num_trajectories=1", "model=oracle", "protocol=autoregressive",
        "metric.pose_error.stride=16"],
        metrics=("psnr", "pose_error", "step_latency"))
    assert values["psnr"] == 100.0 and values["pose_error"] == 0.0
    steps = [r for r in read_jsonl(run_dir / "steps.jsonl") if r.get("call") == "step"]
    assert len(steps) == 256
    [row] = [r for r in read_jsonl(run_dir / "metrics.jsonl") if r["metric_id"] == "psnr"]
    assert len(row["components"]["per_frame"]) == 256  # quality against the horizon, frame by frame


def test_closed_loop_with_a_random_policy_keeps_the_oracle_exact(maze_store, tmp_path):
    values, _ = _run(maze_store, tmp_path, "closed", [*MAZE_SMALL, f"run.limit={LIMIT}", "model=oracle",
                                                      "protocol=closed_loop", "policy=random"])
    assert values["psnr"] == 100.0 and values["ssim"] == 1.0 and values["pose_error"] == 0.0


def test_the_cli_gives_the_oracle_psnr_100_and_static_less(maze_store, tmp_path):
    printed = {}
    for model in ("oracle", "static"):
        proc = run_cli([*MAZE_SMALL, f"model={model}", f"run.store_dir={maze_store}", "run.limit=1",
                        "metric=[psnr,ssim]", f"hydra.run.dir={tmp_path / model}"], cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr[-2000:]
        printed[model] = float(re.search(r"memory_maze\.psnr\s+(\S+)", proc.stdout).group(1))
    assert printed["oracle"] == 100 and printed["static"] < 30
