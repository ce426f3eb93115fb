"""Latent planning (task=goal_reaching for a model with the latent interface; docs/latent-models.md):
a latent model plans by the distance of its predicted latents to the encoded goal, acts in the true
world, and is judged by the simulator's exact state. The calibration models rank as designed on orby
(the exact state with the true future reaches nearly every goal, a predictor that never moves no
better than random plans), the successes agree with tiny-jepa's own OrbyWorld replaying the
executed actions, and a hand-made latent model with exact dynamics reaches every goal."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import compose
from wfeval.pipeline.runner import run_from_config

ORBY = ["benchmark=orby", "task=goal_reaching", "benchmark.num_trajectories=2", "benchmark.windows_per_trajectory=4",
        "protocol.planner.candidates=24"]  # small: the oracle predictor runs every candidate in the true world
MODELS = {"state_oracle": ["model=state_oracle"], "static": ["model=state_oracle", "model.predictor=static"],
          "tiny_jepa": ["model=tiny_jepa", "run.limit=4"]}


def _run(root, name, overrides):
    pytest.importorskip("tiny_jepa")
    cfg = compose([f"run.store_dir={root / 'store'}", "run.progress=off", "run.report=false", *ORBY, *overrides])
    summary = run_from_config(cfg, output_dir=root / name)
    results = {k.split(".", 1)[1]: agg.to_dict() for k, agg in summary.results.items()}
    lines = (root / name / "metrics.jsonl").read_text().splitlines()
    rows = [json.loads(line) for line in lines]
    pairs = [json.loads(line) for line in (root / name / "generations.jsonl").read_text().splitlines()]
    return results, rows, pairs


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    root = tmp_path_factory.mktemp("latent_planning")
    return {name: _run(root, name, overrides) for name, overrides in MODELS.items()}


def _value(runs, model, metric):
    return runs[model][0][metric]["diagnostics"]["value"]


def test_the_state_oracle_reaches_nearly_every_goal_and_a_static_predictor_few(runs):
    assert _value(runs, "state_oracle", "goal_success") >= 7 / 8
    assert _value(runs, "static", "goal_success") <= 2 / 8  # every candidate ties: the first random plan
    assert runs["state_oracle"][0]["goal_success"]["confidence_interval"]["low"] > _value(runs, "static", "goal_success")
    assert _value(runs, "state_oracle", "spl") > _value(runs, "static", "spl") + 0.5
    for name in MODELS:  # every sample generated: the latents stand in for the video it cannot draw
        assert _value(runs, name, "generated_rate") == 1.0


def test_successes_agree_with_orbyworld_replaying_the_executed_actions(runs):
    """Simulator truth: tiny-jepa's own OrbyWorld, from the sample's seed and saved actions, then the
    executed actions; success when the agent ends within 1 px of the goal on both axes."""
    from tiny_jepa import OrbyWorld

    for name in ("state_oracle", "static"):
        _, rows, pairs = runs[name]
        success = {r["sample_id"]: r["raw_value"] for r in rows if r["metric_id"] == "goal_success"}
        assert len(success) == len(pairs) == 8
        for pair in pairs:
            request = pair["request"]
            state, goal = request["metadata"]["simulator"]["state"], request["metadata"]["goal"]
            world = OrbyWorld(seed=state["seed"])
            for action in state["actions"]:
                world.step(action)
            start = world.agent.copy()
            target = start + 2.0 * np.asarray(goal["steps"], dtype=np.float64)
            assert np.allclose(target, goal["position_px"]) and goal["distance"] == np.abs(goal["steps"]).sum()
            for action in request["controls"]["actions"]:
                world.step(action)
            reached = bool(np.abs(world.agent - target).max() <= 1.0)
            assert success[request["sample_id"]] == int(reached), (name, request["sample_id"])
            assert reached or len(request["controls"]["actions"]) == goal["max_steps"]


def test_tiny_jepa_plans_in_its_latent_space_and_keeps_its_decoded_pixels(runs):
    results, _, pairs = runs["tiny_jepa"]
    assert results["goal_success"]["n_valid"] == 4
    assert results["psnr"]["n_valid"] == 4  # its decoder's predictions of the executed steps, against the truth
    for pair in pairs:
        meta = pair["result"]["metadata"]
        assert meta["planning"]["space"] == "latent" and meta["required_outputs"] == ["generated_video",
                                                                                     "predicted_latents"]
        rows = meta["steps"]
        assert len(rows) == len(pair["request"]["controls"]["actions"]) and rows[0]["imagined_steps"] == 24 * 6
        assert all(np.isfinite(r["best_score_latent"]) for r in rows)


class ExactAgent:
    """A latent model of orby that sees the agent's exact position (``needs_state``, as the calibration
    encoders do) and moves it 2 px per action (the canvas edge ignored): a perfect agent model."""

    name = "exact_agent"
    needs_state = True

    def encode(self, frames, states=None, discrete=None):
        return np.asarray(states, dtype=np.float64)[:, :2]

    def predict(self, z, actions):
        moves = np.array([[0, 0], [0, -2], [0, 2], [-2, 0], [2, 0]], dtype=np.float64)
        return np.asarray(z)[:, None, :] + np.cumsum(moves[np.asarray(actions)], axis=1)


def test_a_latent_model_with_exact_dynamics_reaches_every_goal_by_a_shortest_path_batched_or_alone(tmp_path):
    from tests.protocols.test_step_interface import _requests
    from wfeval.pipeline import build
    from wfeval.protocols.planning import Planning
    from wfeval.storage.artifacts import ArtifactStore

    pytest.importorskip("tiny_jepa")
    requests = _requests(tmp_path / "store", *ORBY)[:4]
    bench = build.build_benchmark(compose(ORBY))
    model = ExactAgent()
    driver = Planning({"method": "cem", "candidates": 24, "horizon": 6, "elites": 4}).drive(
        model, bench, ArtifactStore(tmp_path / "s"), None)
    together = driver.generate(requests)
    for request, out in zip(requests, together):
        info, goal = out.metadata["planning"], request.metadata["goal"]
        assert info["success"] and info["steps"] == goal["distance"] == info["optimal_steps"]  # a shortest path
        assert info["space"] == "latent" and out.outputs["predicted_latents"].shape == (info["steps"], 2)
        np.testing.assert_allclose(out.outputs["predicted_latents"][-1], goal["position_px"])  # it ends on the goal
        alone = driver.generate([request])[0]
        assert alone.metadata["planning"] == info  # each sample plans with its own generator, batched or not
    assert max(r["batch"] for r in together[0].metadata["steps"]) == 4


def test_pixel_planning_on_orby_and_a_fitted_encoder_are_refused_in_one_paragraph():
    from wfeval.config.errors import ConfigError
    from wfeval.pipeline import build
    from wfeval.protocols.planning import Planning

    pytest.importorskip("tiny_jepa")
    bench = build.build_benchmark(compose(ORBY))  # nothing recorded: the check comes first
    pixels = build.build_model(compose([*ORBY, "model=game_oracle"])).model
    with pytest.raises(ConfigError, match="plans in latent space only"):
        Planning().check(pixels, bench)
    with pytest.raises(ConfigError, match="fit on training episodes"):
        Planning().check(build.build_model(compose([*ORBY, "model=pixels_pca"])).model, bench)
    Planning().check(build.build_model(compose([*ORBY, "model=state_oracle"])).model, bench)


def test_gridworld_plans_in_latent_space_too_and_its_successes_are_the_worlds(tmp_path):
    """The exact state with the true future reaches every goal, the static predictor none; success is
    the world's own: the executed actions stepped from the start put the agent on the goal cell."""
    from tests.models.test_latent_models import CellEncoder
    from tests.protocols.test_step_interface import _requests
    from wfeval.benchmarks.gridworld import world
    from wfeval.models.latent_baselines import StateOracle
    from wfeval.pipeline import build
    from wfeval.protocols.planning import Planning
    from wfeval.storage.artifacts import ArtifactStore

    requests = _requests(tmp_path / "store", "task=goal_reaching", "benchmark.num_samples=4")
    bench = build.build_benchmark(compose(["task=goal_reaching", "benchmark.num_samples=4"]))
    success = {}
    for name, model in (("oracle", StateOracle()), ("static", StateOracle(predictor="static")),
                        ("cells", CellEncoder())):
        outs = Planning({"candidates": 16}).drive(model, bench, ArtifactStore(tmp_path / "s"), None).generate(requests)
        success[name] = [o.metadata["planning"]["success"] for o in outs]
        for request, out in zip(requests, outs):
            state = world.WorldState.from_dict(request.metadata["world"])
            for action in out.metadata["planning"]["actions"]:
                state = world.step(state, action)
            assert (list(state.agent) == list(request.metadata["goal"]["cell"])) == out.metadata["planning"]["success"]
    assert all(success["oracle"]) and not any(success["static"]) and sum(success["cells"]) >= 2
