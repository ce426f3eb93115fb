"""Probes read the numbers the model gave: a probe's result does not depend on the latents' scale
(latents ×1e200, whose squares overflow, or ×1e-15, below any fixed threshold, give the unscaled
scores), and complex, boolean or object latents are refused per sample with the reason, never
cast (a complex latent's imaginary part dropped with one NumPy warning)."""

from __future__ import annotations

import dataclasses
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


def _probing(tmp_path, name, *overrides, store="store"):
    cfg = compose([f"run.store_dir={tmp_path / store}", "run.progress=off", "run.report=false", "task=probing",
                   "benchmark.num_samples=4", "protocol.train_episodes=4", "task.data.probing.num_frames=9",
                   "protocol.horizons=[1]", "model=python", f"model.object._target_={TARGET}", *overrides])
    run_from_config(cfg, output_dir=tmp_path / name)
    return [json.loads(line) for line in (tmp_path / name / "generations.jsonl").read_text().splitlines()]


def _scores(records):
    return [r["result"]["metadata"]["probing"]["observed"] for r in records]


@pytest.fixture(autouse=True)
def trusted(monkeypatch):
    monkeypatch.setenv("WFEVAL_TRUST", f"{TARGET},{__name__}.MarkedFails")  # in-process: trusted explicitly


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


class MarkedFails(CellEncoder):
    """Latents NaN for every frame whose top-left pixel carries the test's mark (one episode's)."""

    def encode(self, frames):
        z = super().encode(frames)
        z[np.asarray(frames)[:, 0, 0, 0] == 7] = np.nan
        return z


def test_joined_encode_calls_give_the_scores_of_one_episode_per_call(tmp_path):
    def run(name, *overrides):
        cfg = compose([f"run.store_dir={tmp_path / name / 'store'}", "run.progress=off", "run.report=false",
                       "task=probing", "benchmark.num_samples=4", "protocol.train_episodes=4",
                       "task.data.probing.num_frames=9", "protocol.horizons=[1]", "model=random_projection",
                       "model.dim=32", *overrides])
        run_from_config(cfg, output_dir=tmp_path / name / "run")
        return _scores(json.loads(line) for line in (tmp_path / name / "run" / "generations.jsonl").open())

    joined, alone = run("joined"), run("alone", "protocol.encode_frames=1")
    assert len(joined) == len(alone) == 4
    for a, b in zip(joined, alone):  # per variable: kind and frames equal, scores to round-off
        for name in a:
            assert {k: v for k, v in a[name].items() if isinstance(v, str)} == \
                {k: v for k, v in b[name].items() if isinstance(v, str)}
            assert {k: v for k, v in a[name].items() if not isinstance(v, str)} == pytest.approx(
                {k: v for k, v in b[name].items() if not isinstance(v, str)}, rel=1e-12, abs=1e-12)


def test_an_episode_whose_latents_fail_in_a_joined_call_fails_alone(tmp_path, monkeypatch):
    from wfeval.benchmarks.gridworld.adapter import GridworldBenchmark

    original, requested = GridworldBenchmark.probe_episode, []

    def second_marked(self, request):  # the second evaluation episode's frames carry the mark
        episode, requested[len(requested):] = original(self, request), [request.sample_id]
        if len(requested) != 2:
            return episode
        frames = np.array(episode.frames)
        frames[:, 0, 0, 0] = 7
        return dataclasses.replace(episode, frames=frames)

    monkeypatch.setattr(GridworldBenchmark, "probe_episode", second_marked)
    marked = _probing(tmp_path, "marked", f"model.object._target_={__name__}.MarkedFails")
    monkeypatch.setattr(GridworldBenchmark, "probe_episode", original)
    plain = _probing(tmp_path, "plain", f"model.object._target_={__name__}.MarkedFails", store="plain_store")
    assert [r["result"]["status"] for r in marked] == ["ok", "failed", "ok", "ok"]
    assert marked[1]["request"]["sample_id"] == requested[1] and "NaN" in marked[1]["result"]["error"]
    assert _scores([marked[i] for i in (0, 2, 3)]) == _scores([plain[i] for i in (0, 2, 3)])
