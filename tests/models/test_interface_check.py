"""Before a run starts, an object lacking the interface its task needs is refused with one error that
lists every missing method and every method that cannot take the arguments the drivers pass, and
names the task and the page (wfeval/models/interfaces.py)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import compose
from wfeval.config.errors import ConfigError
from wfeval.models import interfaces
from wfeval.pipeline.runner import run_from_config


class EncoderWithoutFrames:
    """encode() forgot its frames argument, and there is no predict: two problems, both listed."""

    def encode(self):
        return np.zeros((1, 2))

    def generate(self, requests):
        return [ValueError("never called") for _ in requests]


class HalfStepper:
    """start(request) but no step: a stepping driver cannot drive it."""

    def start(self, request):
        return request

    def generate(self, requests):
        return [ValueError("never called") for _ in requests]


def _run(tmp_path, target, monkeypatch, *overrides):
    monkeypatch.setenv("WFEVAL_TRUST", target)  # in-process: no command line, trusted explicitly
    cfg = compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false",
                   "benchmark.num_samples=2", "model=python", f"model.object._target_={target}", *overrides])
    return run_from_config(cfg, output_dir=tmp_path / "run")


def test_probing_lists_every_latent_problem_of_the_object_with_the_task_and_the_page(tmp_path, monkeypatch):
    target = "tests.models.test_interface_check.EncoderWithoutFrames"
    with pytest.raises(ConfigError) as caught:
        _run(tmp_path, target, monkeypatch, "task=probing", "protocol.train_episodes=2",
             "task.data.probing.num_frames=5", "protocol.horizons=[1]")
    message = str(caught.value)
    assert message.startswith("task=probing needs the latent interface (encode(frames), predict(z, actions); "
                              "docs/latent-models.md)")
    assert f"({target})" in message  # the user's class, not wfeval's wrapper
    assert "encode() cannot be called as encode(frames); predict(z, actions) is missing" in message
    assert not list((tmp_path / "store").glob("generations/*/*.json"))  # refused before any generation


def test_a_stepping_protocol_lists_the_missing_step_method(tmp_path, monkeypatch):
    with pytest.raises(ConfigError, match=r"protocol.driver=autoregressive needs the step interface \(start\(request\), "
                                          r"step\(state, actions\); docs/protocols.md\).*: step\(state, actions\) is "
                                          r"missing; without it a model can only run protocol=open_loop$"):
        _run(tmp_path, "tests.models.test_interface_check.HalfStepper", monkeypatch, "protocol=autoregressive")


def test_problems_names_a_non_callable_attribute_and_accepts_flexible_signatures():
    class Odd:
        encode = 3

        def predict(self, *args, **kwargs):
            return args

    class Complete:
        def encode(self, frames, states=None):
            return frames

        def predict(self, z, actions, *, extra=None):
            return z

    assert interfaces.problems(Odd(), interfaces.LATENT) == ["encode is a int, not a method encode(frames)"]
    assert interfaces.problems(Complete(), interfaces.LATENT) == []
    assert interfaces.problems(Complete(), interfaces.STEP) == ["start(request) is missing",
                                                                 "step(state, actions) is missing"]


def test_the_calibration_encoders_pass_the_check():
    from wfeval.models.latent_baselines import PixelsPCA, RandomProjection, StateOracle

    for cls in (StateOracle, RandomProjection, PixelsPCA):
        assert interfaces.problems(cls(), interfaces.LATENT) == [], cls
