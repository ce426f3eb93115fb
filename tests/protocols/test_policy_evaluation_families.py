"""task=policy_evaluation on every simulated recorded family (the Atari games, Crafter, orby, Memory
Maze): the demonstration-tracking reward in closed form, the true returns of the scripted policies
ordered by their known skill, the simulator as model ranking them exactly and models that ignore
the actions ranking nothing."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import MAZE_SMALL, compose
from wfeval.benchmarks.recorded.policy_evaluation import scripted_policies, tracking_reward
from wfeval.pipeline.runner import run_from_config
from wfeval.storage.rundir import read_jsonl

FAMILIES = {
    "atari_pong": ["benchmark=atari_pong", "benchmark.num_trajectories=1"],
    "atari_boxing": ["benchmark=atari_boxing", "benchmark.num_trajectories=1"],
    "crafter": ["benchmark=crafter", "benchmark.num_trajectories=1", "benchmark.windows_per_trajectory=2"],
    "orby": ["benchmark=orby", "benchmark.num_trajectories=1"],
    "memory_maze": MAZE_SMALL,
}


def test_the_tracking_reward_is_one_minus_the_mean_absolute_error_over_255():
    demo = np.zeros((3, 4, 4, 3), dtype=np.uint8)
    demo[2] = 200
    frame = np.full((4, 4, 3), 149, dtype=np.uint8)
    assert tracking_reward(demo, frame, 2) == pytest.approx(1 - 51 / 255)
    assert tracking_reward(demo, demo[1], 1) == 1.0 and tracking_reward(demo, demo[1], 3) == 0.0  # past the end
    assert list(scripted_policies()) == ["demonstrator", "follow_75", "follow_50", "random"]  # best first


def _run(tmp_path, family: str, model: str, store):
    cfg = compose([*FAMILIES[family], "task=policy_evaluation", f"model={model}", "run.progress=off", "run.limit=2",
                   f"run.store_dir={store}", "metric=[policy_rank_correlation,return_error]"])
    out = tmp_path / f"{family}_{model}"
    summary = run_from_config(cfg, output_dir=out)
    values = {k.split(".", 1)[1]: a.diagnostics.get("value") for k, a in summary.results.items()}
    rows = [r for r in read_jsonl(out / "metrics.jsonl") if r["metric_id"] == "policy_rank_correlation"]
    return values, rows


@pytest.mark.parametrize("family", list(FAMILIES))
def test_the_simulator_ranks_the_policies_exactly_and_a_model_that_ignores_actions_ranks_nothing(tmp_path, family,
                                                                                                request):
    # the maze: the session's store, its trajectory recorded once for every maze test (conftest.maze_store)
    store = request.getfixturevalue("maze_store") if family == "memory_maze" else tmp_path / "store"
    oracle, rows = _run(tmp_path, family, "game_oracle", store)
    assert oracle == {"policy_rank_correlation": 1.0, "return_error": 0.0}
    true = np.array([r["components"]["true_returns"] for r in rows])
    settings = next(iter(read_jsonl(tmp_path / f"{family}_game_oracle" / "generations.jsonl")))["result"][
        "metadata"]["policy_evaluation"]
    assert rows[0]["components"]["policies"] == ["demonstrator", "follow_75", "follow_50", "random"]
    assert settings["discount"] == 1.0 and (true[:, 0] == settings["max_steps"]).all()  # reproduces the demonstration
    assert (true <= true[:, :1]).all() and true[:, 1].mean() > true[:, 3].mean()  # known skill: following beats random
    for model in ("static", "game_random_actions"):  # the same frames whatever the actions: every return ties
        values, _ = _run(tmp_path, family, model, store)
        assert values["policy_rank_correlation"] == 0.0 and values["return_error"] > 0.0


def test_objective_from_frames_is_read_one_way_false_by_default_and_only_as_a_bool():
    from wfeval.benchmarks.recorded.adapter import RecordedBenchmark
    from wfeval.config.errors import ConfigError
    from wfeval.tasks.family import objective_from_frames

    assert objective_from_frames(object()) is False and objective_from_frames(RecordedBenchmark) is True
    odd = type("Odd", (), {"objective_from_frames": "yes"})()
    with pytest.raises(ConfigError, match="objective_from_frames must be True or False, got 'yes'"):
        objective_from_frames(odd)


def test_a_family_whose_scripted_set_changed_in_code_gets_new_episodes_not_the_cached_ones(tmp_path, monkeypatch):
    """The generation key holds the policies the driver took from the family (their class and settings):
    the same set again is served from the store, a set changed in code is generated anew."""
    from wfeval.benchmarks.recorded import policy_evaluation as family

    def generated(name: str) -> dict:
        cfg = compose(["benchmark=orby", "benchmark.num_trajectories=1", "task=policy_evaluation", "model=oracle",
                       "run.progress=off", "run.limit=1", f"run.store_dir={tmp_path / 'store'}",
                       "metric=[policy_rank_correlation]"])
        run_from_config(cfg, output_dir=tmp_path / name)
        return next(e for e in read_jsonl(tmp_path / name / "events.jsonl") if e["event"] == "phase_finished" and e.get("phase") == "generate")

    assert generated("first")["cached"] == 0
    assert generated("again")["cached"] == 1  # the same set: the stored episodes
    changed = {p.name: p for p in (family.FollowDemonstration("demonstrator", 1.0),
                                   family.FollowDemonstration("follow_75", 0.75),
                                   family.FollowDemonstration("follow_50", 0.25),  # its skill changed
                                   family.FollowDemonstration("random", 0.0))}
    monkeypatch.setattr(family, "scripted_policies", lambda: changed)
    third = generated("changed")
    assert third["cached"] == 0 and third["generated"] == 1 and third["failed"] == 0
