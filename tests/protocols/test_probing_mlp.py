"""protocol.probe=mlp (wfeval/protocols/probing_mlp.py): small-MLP probes scored as the ridge ones are —
the exact state near the ceiling, pixels times a random matrix far below it, the same chance levels as a
ridge run of the same size — with the split, the epochs and the seed in each episode's metadata."""

from __future__ import annotations

import json

import pytest

from tests.conftest import compose
from wfeval.config.errors import ConfigError
from wfeval.protocols.probing import Probing

GRID = ["benchmark.num_samples=4", "protocol.train_episodes=16", "task.data.probing.num_frames=17",
        "protocol.mlp_hidden=64", "protocol.mlp_epochs=60", "metric=[probe_r2,probe_accuracy,imagined_probe_r2]",
        "metric.imagined_probe_r2.horizons=[1]", "protocol.horizons=[1]"]


def _run(tmp_path, name, *overrides):
    from wfeval.pipeline.runner import run_from_config

    summary = run_from_config(compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false",
                                       "task=probing", *GRID, *overrides]), output_dir=tmp_path / name)
    results = {k.split(".", 1)[1]: a.to_dict() for k, a in summary.results.items()}
    first = json.loads((tmp_path / name / "generations.jsonl").read_text().splitlines()[0])
    return results, first["result"]["metadata"]["probing"]


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("mlp-probes")
    return {name: _run(root, name, *overrides) for name, overrides in {
        "oracle": ["model=state_oracle", "protocol.probe=mlp"],
        "projection": ["model=random_projection", "protocol.probe=mlp"],
        "oracle_ridge": ["model=state_oracle"],
    }.items()}


def test_the_exact_state_reaches_the_ceiling_and_pixels_times_a_random_matrix_fall_far_below(runs):
    oracle, projection = runs["oracle"][0], runs["projection"][0]
    value = {name: r["probe_r2"]["diagnostics"]["value"] for name, r in (("oracle", oracle), ("projection", projection))}
    assert value["oracle"] > 0.9 and value["projection"] < value["oracle"] - 0.5
    assert oracle["probe_accuracy"]["diagnostics"]["value"] > 0.9
    assert oracle["imagined_probe_r2_k1"]["diagnostics"]["value"] > 0.9  # the oracle predictor: the true future


def test_chance_and_ceiling_are_the_ridge_runs_of_the_same_size(runs):
    (mlp, _), (ridge, _) = runs["oracle"], runs["oracle_ridge"]
    for metric in ("probe_r2", "probe_accuracy"):
        for key in ("chance", "ceiling", "effective_rank"):
            assert mlp[metric]["diagnostics"][key] == ridge[metric]["diagnostics"][key], (metric, key)
    assert ridge["probe_r2"]["diagnostics"]["value"] == pytest.approx(1.0, abs=1e-9)  # ridge: unchanged, exact


def test_each_episode_records_the_split_the_epochs_and_the_seed_the_probes_were_trained_with(runs):
    info = runs["oracle"][1]
    mlp = info["mlp"]
    assert mlp["split"] == {"train": 14, "validation": 2} and (mlp["hidden"], mlp["epochs"], mlp["seed"]) == (64, 60, 0)
    assert set(mlp["best_epoch"]) == {v["name"] for v in info["variables"]}
    assert all(1 <= e <= mlp["epochs_run"] <= 60 for e in mlp["best_epoch"].values())
    assert "alphas" not in info and "alphas" in runs["oracle_ridge"][1]


def test_a_probe_that_is_not_offered_or_a_network_of_no_units_is_a_config_error():
    with pytest.raises(ConfigError, match="protocol.probe must be one of ridge, mlp, atariari"):
        Probing(probe="lasso")
    with pytest.raises(ConfigError, match="protocol.mlp_hidden and protocol.mlp_epochs must be >= 1"):
        Probing(probe="mlp", mlp_hidden=0)
