"""Probes read the numbers the model gave: a probe's result does not depend on the latents' scale
(latents ×1e200, whose squares overflow, or ×1e-15, below any fixed threshold, give the unscaled
scores), and complex, boolean or object latents are refused per sample with the reason, never
cast (a complex latent's imaginary part dropped with one NumPy warning)."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import compose
from tests.models.test_latent_models import CellEncoder
from wfeval.functional.probing import choose_alpha, fit_ridge
from wfeval.pipeline.runner import run_from_config


class ScaledCells(CellEncoder):
    """The cell encoder with two noise dimensions, every latent multiplied by ``factor`` (or made
    complex / boolean / object by ``kind``)."""

    def __init__(self, factor: float = 1.0, kind: str = "real"):
        self.factor, self.kind = factor, kind

    def _out(self, z):
        z = np.asarray(z, dtype=np.float64) * self.factor
        if self.kind == "complex":
            return z + 0j
        if self.kind == "bool":
            return z > 0
        if self.kind == "object":
            return z.astype(object)
        return z

    def encode(self, frames):
        z = super().encode(frames)
        rng = np.random.default_rng(int(np.asarray(frames, dtype=np.int64).sum()) % 2**32)
        return self._out(np.concatenate([z, rng.normal(size=(len(z), 2))], axis=1))

    def predict(self, z, actions):
        cells = np.asarray(z)[:, :2] / self.factor
        ahead = super().predict(cells, actions)
        noise = np.repeat(np.asarray(z)[:, None, 2:] / self.factor, ahead.shape[1], axis=1)
        return self._out(np.concatenate([ahead, noise], axis=2))


TARGET = "tests.robustness.test_probe_reads_only_what_the_model_gave.ScaledCells"


def _probing(tmp_path, name, *overrides):
    cfg = compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false", "task=probing",
                   "benchmark.num_samples=4", "protocol.train_episodes=4", "task.data.probing.num_frames=9",
                   "protocol.horizons=[1]", "model=python", f"model.object._target_={TARGET}", *overrides])
    run_from_config(cfg, output_dir=tmp_path / name)
    return [json.loads(line) for line in (tmp_path / name / "generations.jsonl").read_text().splitlines()]


def _scores(records):
    return [r["result"]["metadata"]["probing"]["observed"] for r in records]


@pytest.fixture(autouse=True)
def trusted(monkeypatch):
    monkeypatch.setenv("WFEVAL_TRUST", TARGET)  # in-process: no command line, trusted explicitly


def test_a_probe_does_not_depend_on_the_latents_scale(tmp_path):
    plain = _scores(_probing(tmp_path, "plain"))
    assert 0.1 < plain[0]["object_row"]["r2"] < 0.99  # partly read: a scale problem would show
    for factor in (1e200, 1e-15):
        scaled = _scores(_probing(tmp_path, f"x{factor:g}", f"+model.object.factor={factor}"))
        for want, got in zip(plain, scaled):
            for variable, score in want.items():
                for key in ("r2", "accuracy"):
                    if key in score:
                        assert got[variable][key] == pytest.approx(score[key], rel=1e-9, abs=1e-9), (factor, variable)


def test_unscaled_latents_give_the_very_same_probe_as_before_and_powers_of_two_exactly():
    rng = np.random.default_rng(0)
    z, y = rng.normal(size=(64, 5)), rng.normal(size=64)
    groups = np.repeat(np.arange(8), 8)
    probe = fit_ridge(z, y, alpha=choose_alpha(z, y, groups))
    mean, scale = z.mean(axis=0), z.std(axis=0)  # the plain statistics: unchanged for ordinary latents
    assert np.array_equal(probe.mean, mean) and np.array_equal(probe.scale, scale)
    twice = fit_ridge(z * 2.0**40, y, alpha=choose_alpha(z * 2.0**40, y, groups))
    assert np.array_equal(twice.predict(z * 2.0**40), probe.predict(z))  # a power of two: bit for bit


@pytest.mark.parametrize("kind, reason", [("complex", "complex values"), ("bool", "bool values"),
                                          ("object", "object values")])
def test_latents_that_are_not_real_numbers_are_refused_per_sample_with_the_reason(tmp_path, kind, reason):
    records = _probing(tmp_path, kind, f"+model.object.kind={kind}")
    assert len(records) == 4
    assert all(r["result"]["status"] == "failed" and reason in r["result"]["error"] for r in records)
    assert all("latents must be real numbers" in r["result"]["error"] for r in records)
