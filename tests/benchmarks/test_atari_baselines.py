"""Baselines on real Atari frames, through the CLI a user types: game_oracle is exact, static is
clearly worse, random actions in between (the precomputed-videos flow runs in test_atari_docs)."""

from __future__ import annotations

import json

import pytest

from tests.conftest import read_jsonl, run_cli

pytest.importorskip("ale_py")


def test_oracle_is_exact_static_clearly_worse_and_random_actions_between(tmp_path):
    sweep = tmp_path / "sweep"
    proc = run_cli(["-m", "benchmark=atari_pong", "model=game_oracle,static,game_random_actions", "metric=[psnr,ssim]",
                    "benchmark.num_trajectories=2", f"run.store_dir={tmp_path / 'store'}", "run.progress=off",
                    f"hydra.sweep.dir={sweep}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr[-3000:]
    value = {}
    for run in sorted(p for p in sweep.iterdir() if (p / "results.json").exists()):
        results = json.loads((run / "results.json").read_text())
        model = results["model"]["name"]
        value[model] = {k.split(".")[1]: v["diagnostics"]["value"] for k, v in results["results"].items()}
        assert all(v["n_valid"] == 8 for v in results["results"].values())
    assert value["game_oracle"] == {"psnr": 100.0, "ssim": 1.0}  # identical frames: psnr capped at max_db
    assert value["static"]["psnr"] < 40 and value["static"]["ssim"] < 0.96
    for metric in ("psnr", "ssim"):
        assert value["static"][metric] < value["game_random_actions"][metric] < value["game_oracle"][metric], value
    manifest = json.loads((sweep / "0_game_oracle" / "manifest.json").read_text())
    assert manifest["benchmark"]["fingerprint"]["identity"]["rom"]["id"] == "pong"
    assert manifest["benchmark"]["runtime"]["recording"]["trajectories_recorded"] == 2
    second = json.loads((sweep / "1_static" / "manifest.json").read_text())["benchmark"]["runtime"]["recording"]
    assert second["trajectories_cached"] == 2 and second["trajectories_recorded"] == 0
    row = read_jsonl(sweep / "0_game_oracle" / "samples.jsonl")[0]
    assert row["metadata"]["game"] == "pong" and row["metadata"]["trajectory"] == 0

