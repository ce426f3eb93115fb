"""protocol.probe=atariari (wfeval/protocols/probing_atariari.py): AtariARI's splits, its near-constant
variables dropped and its duplicate frames removed, each recomputed here from the episodes themselves;
logistic probes scored by weighted F1, the ceiling reached by the exact state and chance beside it."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import compose
from wfeval.api import GenerationRequest
from wfeval.config.errors import ConfigError
from wfeval.protocols.probing import Probing
from wfeval.protocols.probing_atariari import ENTROPY_THRESHOLD, split_counts


def test_training_episodes_are_dealt_seven_to_one_into_training_and_validation():
    assert split_counts(32) == (28, 4) and split_counts(16) == (14, 2) and split_counts(8) == (7, 1)
    assert split_counts(2) == (1, 1)
    with pytest.raises(ConfigError, match="protocol.probe must be one of ridge, mlp, atariari"):
        Probing(probe="lasso")


def _run(tmp_path, name, *overrides):
    from wfeval.pipeline.runner import run_from_config

    summary = run_from_config(compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false",
                                       "task=probing", "protocol.probe=atariari", *overrides]),
                              output_dir=tmp_path / name)
    return summary.results, _generations(tmp_path / name)


def _generations(folder):
    generations = [json.loads(line) for line in (folder / "generations.jsonl").read_text().splitlines()]
    return [(GenerationRequest.from_dict(g["request"]), g["result"]["metadata"]["probing"]) for g in generations]


def _mean(results, metric):
    """The aggregate of ``metric`` (results.json's form) of a run's results (aggregates or their dicts)."""
    agg = next(a for k, a in results.items() if k.endswith("." + metric))
    return agg if isinstance(agg, dict) else agg.to_dict()


GRID = ["benchmark.num_samples=4", "protocol.train_episodes=8", "task.data.probing.num_frames=17"]


def test_on_gridworld_the_exact_state_reaches_the_ceiling_and_pixels_times_a_random_matrix_do_not(tmp_path):
    oracle, infos = _run(tmp_path, "oracle", *GRID, "model=state_oracle")
    projection, _ = _run(tmp_path, "projection", *GRID, "model=random_projection")
    f1 = {name: _mean(s, "probe_f1") for name, s in (("oracle", oracle), ("projection", projection))}
    # the exact state (one indicator per value: classes a linear probe reads) misses only values that 8 short
    # training episodes never showed; the pixels times a random matrix read little linearly
    assert f1["oracle"]["n_valid"] == 4 and f1["oracle"]["normalized_stats"]["mean"] > 0.9
    assert f1["oracle"]["diagnostics"]["pooled"]["mean"] > 0.9
    assert f1["projection"]["normalized_stats"]["mean"] < f1["oracle"]["normalized_stats"]["mean"] - 0.5
    info = infos[0][1]
    assert info["atariari"]["split"]["train"] == 7 and info["atariari"]["split"]["validation"] == 1
    assert all(s["kind"] == "discrete" for s in info["observed"].values())  # every variable read as classes
    chance = [s["f1_chance"] for s in info["observed"].values()]
    assert all(0 <= c < 1 for c in chance) and np.mean(chance) < 0.5  # the majority class named for every frame
    assert _mean(oracle, "probe_r2")["n_valid"] == 0  # no continuous variable: nothing for R²
    assert "AtariARI imagines nothing" in json.dumps(_mean(oracle, "imagined_probe_r2_k1")["skip_breakdown"])


def test_on_pong_near_constant_variables_are_dropped_and_repeated_frames_are_not_scored(pong_atariari_state_oracle):
    pytest.importorskip("ale_py")
    from scipy.stats import entropy

    from wfeval.pipeline import build

    # Pong at 1 trajectory (4 windows) and 8 training episodes, model=state_oracle: the run of the AtariARI
    # table's state_oracle row (tests/conftest.py), made once for this test and the page's table test
    folder, overrides = Path(pong_atariari_state_oracle["folder"]), pong_atariari_state_oracle["overrides"]
    assert {"benchmark=atari_pong", "benchmark.num_trajectories=1", "protocol.train_episodes=8",
            "model=state_oracle", "protocol.probe=atariari"} <= set(overrides)
    results, infos = json.loads((folder / "results.json").read_text())["results"], _generations(folder)
    bench = build.build_benchmark(compose(overrides))
    assert bench.windows_per_trajectory == 4
    training = bench.probe_training(8, 17)
    states = np.concatenate([e.states for e in training])
    names = [v.name for v in bench.state_variables()]
    low = {n for j, n in enumerate(names) if entropy(np.unique(states[:, j], return_counts=True)[1]) < ENTROPY_THRESHOLD}
    first = infos[0][1]
    assert set(first["atariari"]["dropped"]) == low and "player_x" in low  # the paddles never move sideways
    assert set(first["observed"]) == set(names) - low
    seen = np.concatenate([e.frames for e in training])
    for request, info in infos:
        frames = bench.probe_episode(request).frames
        repeated = sum(any(np.array_equal(f, s) for s in seen) for f in frames)
        assert info["atariari"]["duplicates_removed"] == repeated
        assert info["atariari"]["frames_scored"] == len(frames) - repeated
    f1 = _mean(results, "probe_f1")
    assert f1["n_valid"] == 4 and set(f1["diagnostics"]["pooled"]["per_variable"]) == set(names) - low
