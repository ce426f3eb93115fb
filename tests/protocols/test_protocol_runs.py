"""Protocols end to end: autoregressive equals open loop for deterministic models, closed-loop
oracle is exact against the simulator's replay, a dataset folder refuses closed loop before
generation, and a planner imagining with the oracle beats one imagining with random_actions."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ROOT, compose, read_jsonl, run_cli
from wfeval.config.errors import ConfigError
from wfeval.pipeline.runner import run_from_config
from wfeval.storage.artifacts import read_array


def _run(tmp_path: Path, name: str, *overrides: str) -> Path:
    out = tmp_path / name
    run_from_config(compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", *overrides]), out)
    return out


def _values(run: Path) -> dict[str, float]:
    doc = json.loads((run / "results.json").read_text())
    return {k.split(".", 1)[1]: v["diagnostics"].get("value") for k, v in doc["results"].items()}


def _videos(run: Path) -> dict[str, np.ndarray]:
    return {r["request"]["sample_id"]: read_array_ref(r["result"]["artifacts"]["generated_video"])
            for r in read_jsonl(run / "generations.jsonl")}


def read_array_ref(ref: dict) -> np.ndarray:
    from wfeval.api import ArtifactRef

    return read_array(ArtifactRef.from_dict(ref))


@pytest.mark.parametrize("model", ["oracle", "lagged", "noisy"])
def test_autoregressive_videos_equal_open_loop_byte_for_byte(tmp_path, model):
    small = ["benchmark.num_samples=3", f"model={model}", "metric=[psnr]"]
    open_loop = _run(tmp_path, "open", *small)
    stepped = _run(tmp_path, "ar", *small, "protocol=autoregressive", "protocol.chunk=4")
    a, b = _videos(open_loop), _videos(stepped)
    assert list(a) == list(b)
    for sample in a:
        np.testing.assert_array_equal(a[sample], b[sample])
    steps = [r for r in read_jsonl(stepped / "steps.jsonl") if r["phase"] == "step" and r["call"] == "step"]
    assert len(steps) == 3 * 4 and [len(r["actions"]) for r in steps[:4]] == [4, 4, 4, 3]
    assert all(r["frames"] == len(r["actions"]) and r["latency_seconds"] >= 0 for r in steps)
    manifest = json.loads((stepped / "manifest.json").read_text())
    assert manifest["protocol"] == {"name": "autoregressive", "driver": "autoregressive", "chunk": 4}
    # different protocols are different generations in the cache (never served for one another)
    assert manifest["model"]["key"] != json.loads((open_loop / "manifest.json").read_text())["model"]["key"]


def test_autoregressive_adds_latency_and_real_time_factor_with_intervals(tmp_path):
    run = _run(tmp_path, "ar", "benchmark.num_samples=4", "protocol=autoregressive")
    doc = json.loads((run / "results.json").read_text())
    latency, rtf = doc["results"]["gridworld.step_latency"], doc["results"]["gridworld.real_time_factor"]
    # timings lead with the median, with a bootstrap interval that never leaves [0, inf)
    assert latency["n_valid"] == 4 and latency["confidence_interval"]["method"] == "bootstrap_percentile"
    assert 0 <= latency["confidence_interval"]["low"] <= latency["diagnostics"]["value"]
    assert 0 < latency["diagnostics"]["pooled_p50_ms"] <= latency["diagnostics"]["pooled_p95_ms"]
    assert latency["diagnostics"]["pooled_calls"] == 4 * 15
    rows = [r for r in read_jsonl(run / "metrics.jsonl") if r["metric_id"] == "real_time_factor"]
    c = rows[0]["components"]
    assert rows[0]["raw_value"] == pytest.approx(c["frames"] / c["seconds"] / 8.0)  # task fps 8
    assert rtf["valid"] and rtf["confidence_interval"]["low"] is not None
    assert doc["metric_selection"]["step_latency"] == "protocol" and doc["metric_selection"]["psnr"] == "benchmark"


def test_closed_loop_oracle_is_exact_against_the_simulators_replay(tmp_path):
    run = _run(tmp_path, "cl", "benchmark.num_samples=4", "protocol=closed_loop", "policy=random")
    values = _values(run)
    assert values["psnr"] == 100.0 and values["ssim"] == 1.0 and values["action_following"] == 1.0
    rows = read_jsonl(run / "generations.jsonl")
    for row in rows:
        controls = row["request"]["controls"]
        assert controls["actions"] == row["result"]["metadata"]["closed_loop"]["actions"]
        assert controls["actions"] != controls["scripted_actions"]  # the policy chose, not the script


def test_closed_loop_ranks_static_below_oracle_and_scripted_policy_replays_open_loop(tmp_path):
    static = _values(_run(tmp_path, "st", "benchmark.num_samples=4", "protocol=closed_loop", "model=static"))
    assert static["psnr"] < 40 and static["ssim"] < 0.95
    scripted = _run(tmp_path, "sc", "benchmark.num_samples=3", "protocol=closed_loop", "policy=scripted",
                    "model=lagged", "metric=[psnr]")
    open_loop = _run(tmp_path, "ol", "benchmark.num_samples=3", "model=lagged", "metric=[psnr]")
    for sample, video in _videos(open_loop).items():
        np.testing.assert_array_equal(_videos(scripted)[sample], video)
    assert _values(scripted)["psnr"] == pytest.approx(_values(open_loop)["psnr"])


def test_a_dataset_folder_refuses_closed_loop_before_generation(tmp_path):
    proc = run_cli(["benchmark=folder", f"benchmark.dataset_root={ROOT / 'examples/datasets/gridworld_tiny'}",
                    "model=static", "protocol=closed_loop", f"run.store_dir={tmp_path / 'store'}"], cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "needs a simulator" in proc.stderr and "'gridworld_tiny' has none" in proc.stderr and "Traceback" not in proc.stderr
    assert not list((tmp_path / "store").glob("generations/*/*.json"))


def test_protocols_needing_steps_refuse_a_generate_only_model(tmp_path):
    with pytest.raises(ConfigError, match=r"protocol.driver=autoregressive needs the step interface.*start\(request\) is "
                                          r"missing; step\(state, actions\) is missing"):
        _run(tmp_path, "x", "benchmark.num_samples=1", "protocol=autoregressive", "model=python",
             "model.object._target_=wfeval_test_models.RecordingModel")


def test_planner_with_the_oracle_reaches_goals_and_random_actions_does_not(tmp_path):
    small = ["task=goal_reaching", "benchmark.num_samples=6", "protocol.planner.candidates=32",
             "task.data.goal.max_steps=10"]
    oracle = _values(_run(tmp_path, "or", *small))
    rand = _values(_run(tmp_path, "ra", *small, "model=random_actions"))
    assert oracle["goal_success"] == 1.0 and oracle["spl"] > 0.75 and oracle["psnr"] == 100.0
    assert rand["goal_success"] <= 0.34 and rand["spl"] < oracle["spl"]
    run = tmp_path / "or"
    row = read_jsonl(run / "generations.jsonl")[0]
    info = row["result"]["metadata"]["planning"]
    assert info["steps"] >= info["optimal_steps"] == row["request"]["metadata"]["goal"]["distance"]
    assert row["request"]["controls"]["actions"] == info["actions"]
    doc = json.loads((run / "results.json").read_text())
    assert doc["results"]["gridworld.goal_success"]["confidence_interval"]["method"] == "wilson"
    assert doc["protocol"]["name"] == "planning" and doc["metric_selection"]["goal_success"] == "protocol"


@pytest.mark.parametrize("game", ["atari_pong", "crafter"])
def test_closed_loop_on_recorded_games_is_exact_for_the_game_oracle(tmp_path, game):
    pytest.importorskip("ale_py" if game.startswith("atari") else "crafter")
    small = [f"benchmark={game}", "benchmark.num_trajectories=1", "benchmark.windows_per_trajectory=2",
             "benchmark.horizon=5", "protocol=closed_loop", "metric=[psnr,ssim]"]
    oracle = _run(tmp_path, "oracle", *small, "model=game_oracle")
    assert _values(oracle) == {"psnr": 100.0, "ssim": 1.0}
    static = _values(_run(tmp_path, "static", *small, "model=static"))
    assert static["psnr"] < 60 and static["ssim"] < 1.0
    row = read_jsonl(oracle / "generations.jsonl")[0]
    assert len(row["request"]["metadata"]["rewards"]) == 5  # the replay's own rewards, not the recording's


def test_a_user_policy_by_target_chooses_every_action(tmp_path):
    run = _run(tmp_path, "user", "benchmark.num_samples=2", "protocol=closed_loop", "policy=user",
               "policy._target_=wfeval_test_models.TowardsPolicy", "+policy.action=down", "metric=[psnr]")
    rows = read_jsonl(run / "generations.jsonl")
    assert all(set(r["request"]["controls"]["actions"]) == {2} for r in rows)  # "down" is action 2
    assert _values(run)["psnr"] == 100.0
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["protocol"]["policy"] == {"_target_": "wfeval_test_models.TowardsPolicy", "action": "down"}
    with pytest.raises(ConfigError, match="policy"):
        _run(tmp_path, "none", "benchmark.num_samples=1", "protocol=closed_loop", "policy=user")


def test_a_greedy_planner_exposes_lagged_while_its_frames_stay_pretty(tmp_path):
    greedy = ["task=goal_reaching", "benchmark.num_samples=6", "protocol.planner.horizon=1",
              "protocol.planner.candidates=8", "task.data.goal.max_steps=10"]
    oracle = _values(_run(tmp_path, "or", *greedy))
    lagged = _values(_run(tmp_path, "lag", *greedy, "model=lagged"))
    assert oracle["goal_success"] >= 5 / 6 and lagged["goal_success"] <= 1 / 6
    assert lagged["ssim"] > 0.9  # sharp, nearly right frames: pixel quality does not show the failure
