"""The latent interface (wfeval/models/latent.py): a plain numpy object with encode/predict runs
task=probing from model=python and from wfeval.evaluate; its outputs are checked; tiny-jepa's
checkpoint is served through it exactly as the package computes it."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import compose
from wfeval.models import latent
from wfeval.pipeline.runner import run_from_config


class CellEncoder:
    """A hand-made latent model of gridworld: the agent's cell read off the pixels (its colour),
    predicted forward by the action deltas (ignoring walls): linear probes read the agent exactly."""

    name = "cell_encoder"
    version = "1"

    def encode(self, frames):
        from wfeval.benchmarks.gridworld import world

        colour = np.asarray(world.agent_color(), dtype=np.int64)
        out = []
        for frame in np.asarray(frames, dtype=np.int64):
            ys, xs = np.nonzero((frame == colour).all(axis=-1))
            out.append([ys.mean() / 8.0, xs.mean() / 8.0])
        return np.asarray(out)

    def predict(self, z, actions):
        deltas = np.array([[0, 0], [-1, 0], [1, 0], [0, -1], [0, 1]], dtype=np.float64)
        steps = deltas[np.asarray(actions, dtype=np.int64)]  # N×k×2
        return np.asarray(z)[:, None, :] + np.cumsum(steps, axis=1)


def _probing(tmp_path, *overrides):
    cfg = compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false", "task=probing",
                   "benchmark.num_samples=4", "protocol.train_episodes=4", "task.data.probing.num_frames=9",
                   "protocol.horizons=[1,4]", *overrides])
    summary = run_from_config(cfg, output_dir=tmp_path / "run")
    return {k.split(".", 1)[1]: agg.to_dict() for k, agg in summary.results.items()}


def test_a_numpy_latent_object_runs_probing_through_model_python(tmp_path, monkeypatch):
    target = "tests.models.test_latent_models.CellEncoder"
    monkeypatch.setenv("WFEVAL_TRUST", target)  # in-process: no command line, trusted explicitly
    results = _probing(tmp_path, "model=python", f"model.object._target_={target}")
    assert results["probe_r2"]["n_valid"] == 4
    import json

    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    observed = [r["components"] for r in rows if r["metric_id"] == "probe_r2"]
    imagined = [r["components"] for r in rows if r["metric_id"] == "imagined_probe_r2_k1"]
    assert len(observed) == 4
    for comps in observed:  # the agent's cell is in the latent (linearly): read exactly
        assert comps["agent_row"] == pytest.approx(1.0, abs=1e-6) and comps["agent_col"] == pytest.approx(1.0, abs=1e-6)
        assert comps["object_row"] < 0.9  # the object is not in it
    # imagined by the action deltas (walls ignored): exact unless the agent bumped a wall
    assert np.mean([c["agent_row"] for c in imagined]) > 0.5


def test_wfeval_evaluate_serves_a_latent_object_with_a_model_version(tmp_path):
    import wfeval

    results = wfeval.evaluate(CellEncoder(), "gridworld", task="probing", model_version="v1",
                              overrides=[f"run.store_dir={tmp_path / 'store'}", "run.progress=off",
                                         "benchmark.num_samples=2", "protocol.train_episodes=3",
                                         "task.data.probing.num_frames=5", "protocol.horizons=[1]"],
                              run_dir=tmp_path / "run")
    assert "gridworld.probe_r2" in results


def test_a_model_without_the_latent_interface_is_refused_for_probing_with_the_calibration_names(tmp_path):
    from wfeval.config.errors import ConfigError

    with pytest.raises(ConfigError, match=r"task=probing needs the latent interface.*encode\(frames\) is missing; "
                                          r"predict\(z, actions\) is missing.*state_oracle"):
        _probing(tmp_path, "model=static")


def test_predict_outputs_are_checked_for_shape_and_mutation():
    class Bad:
        def encode(self, frames):
            return np.zeros((len(frames), 2))

        def predict(self, z, actions):
            z += 1  # mutates the caller's latents
            return np.repeat(z[:, None], np.asarray(actions).shape[1], axis=1)

    with pytest.raises(ValueError, match="must not mutate"):
        latent.predict(Bad(), np.zeros((3, 2)), np.zeros((3, 2), dtype=int))
    with pytest.raises(ValueError, match="for 3 frame.*expected 3×D"):
        latent.encode(type("E", (), {"encode": lambda self, f: np.zeros((2, 2))})(), np.zeros((3, 4, 4, 3)))


def test_tiny_jepa_is_served_as_the_package_computes_it():
    tiny_jepa = pytest.importorskip("tiny_jepa")
    from wfeval.benchmarks.orby.simulator import OrbySimulator
    from wfeval.benchmarks.orby.tiny_jepa import TinyJepaModel

    model, sim = TinyJepaModel(), OrbySimulator()
    frame = sim.reset(7)
    raw = tiny_jepa.TinyJEPA.load(str(__import__("wfeval.benchmarks.orby.tiny_jepa", fromlist=["x"]).checkpoint_path()))
    z = model.encode(frame[None])
    np.testing.assert_allclose(z[0], raw.encode(frame[..., 0] / 255.0), rtol=1e-5, atol=1e-6)
    future = latent.predict(model, z, np.array([[4, 4, 1]]))
    np.testing.assert_allclose(future[0], raw.imagine(z[0], [4, 4, 1]), rtol=1e-5, atol=1e-5)
    decoded = latent.decode(model, future[0])
    assert decoded.shape == (3, 32, 32, 3)
    expected = np.rint(np.clip(raw.decode(future[0, -1]), 0, 1) * 255)
    # one frame decoded alone vs in a batch of three: float32 sums in another order may round a pixel
    # that lies on a half level the other way (numpy 2.4.6: 1 pixel of 1024), never by more than 1 level
    differs = decoded[-1, ..., 0].astype(np.int64) != expected
    assert np.abs(decoded[-1, ..., 0] - expected).max() <= 1 and differs.mean() < 0.01
    assert model.reward(z, [4]).shape == (1,)
    assert np.isclose(model.reward(z, [4])[0], raw.predict_reward(z[0], 4), atol=1e-5)


def test_the_orby_simulator_restores_exactly_and_reads_the_worlds_state():
    tiny_jepa = pytest.importorskip("tiny_jepa")
    from wfeval.benchmarks.orby.simulator import OrbySimulator

    sim, world = OrbySimulator(), tiny_jepa.OrbyWorld(seed=42)
    sim.reset(42)
    for a in [4, 4, 2, 2, 3, 0, 1, 4]:
        sim.step(a)
        world.step(a)
    assert sim.state() == pytest.approx([*world.agent, *world.balls.ravel(), *world.bvel.ravel(), *world.pellet])
    other = OrbySimulator()
    other.restore(sim.snapshot())
    np.testing.assert_array_equal(other.frame(), sim.frame())
