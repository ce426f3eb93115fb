"""One model identity for every door: a model whose weights come from a fixed path (loaded in
``__init__`` or in ``setup()``, named by no option) is generated again after retraining, from the
command line exactly as from Python; ``run.regenerate=true`` forces it for any model."""

from __future__ import annotations

import json

import numpy as np

import wfeval
from tests.conftest import compose, run_cli
from wfeval.pipeline.runner import run_from_config

# a model whose "checkpoint" is one brightness offset in a file at a path no config names
MODULE = '''
import numpy as np
from wfeval.models.base import actions_of, initial_frame

CHECKPOINT = {checkpoint!r}


class FixedPathModel:
    name = "fixed_path"

    def __init__(self, load_in_setup=False):
        self.load_in_setup = load_in_setup
        self.offset = None if load_in_setup else np.load(CHECKPOINT)

    def setup(self):
        if self.load_in_setup:
            self.offset = np.load(CHECKPOINT)

    def generate(self, requests):
        out = []
        for request in requests:
            frame = initial_frame(request).astype(np.int16) + int(self.offset[0])
            video = np.repeat(np.clip(frame, 0, 255).astype(np.uint8)[None], len(actions_of(request)) + 1, axis=0)
            out.append({{"generated_video": video}})
        return out
'''


def _module(tmp_path, name="fixed_path_model"):
    checkpoint = tmp_path / "weights.npy"
    np.save(checkpoint, np.array([3]))
    (tmp_path / f"{name}.py").write_text(MODULE.format(checkpoint=str(checkpoint)))
    return checkpoint


def _psnr(run_dir) -> float:
    return json.loads((run_dir / "results.json").read_text())["results"]["gridworld.psnr"]["diagnostics"]["value"]


def _manifest(run_dir) -> dict:
    return json.loads((run_dir / "manifest.json").read_text())


def test_weights_retrained_at_a_fixed_path_are_generated_again_from_the_command_line(tmp_path):
    checkpoint = _module(tmp_path)
    args = ["model=python", "model.object._target_=fixed_path_model.FixedPathModel", "benchmark.num_samples=3",
            "metric=[psnr]", "run.progress=off", "run.report=false"]

    def run(name, store="store"):
        proc = run_cli([*args, f"run.store_dir={tmp_path / store}", f"hydra.run.dir={tmp_path / name}"], cwd=tmp_path)
        assert proc.returncode == 0, proc.stderr
        return tmp_path / name

    first, again = run("first"), run("again")
    assert _manifest(again)["model"]["key"] == _manifest(first)["model"]["key"]  # nothing changed: served
    assert _psnr(again) == _psnr(first)
    np.save(checkpoint, np.array([40]))  # retrained into the same file
    retrained = run("retrained")
    assert _manifest(retrained)["model"]["key"] != _manifest(first)["model"]["key"]
    assert _manifest(retrained)["model"]["fingerprint"]["state"]["state"]["arrays"] == 1
    assert _psnr(retrained) == _psnr(run("fresh", store="fresh_store")) < _psnr(first) - 5  # the new weights' number
    events = [json.loads(line) for line in (retrained / "events.jsonl").read_text().splitlines()]
    finished = next(e for e in events if e.get("kind", e.get("event")) == "phase_finished" and e.get("phase") == "generate")
    assert (finished["generated"], finished["cached"]) == (3, 0)


def test_weights_loaded_in_setup_are_hashed_after_setup_as_from_python(tmp_path, monkeypatch):
    checkpoint = _module(tmp_path, "setup_path_model")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("WFEVAL_TRUST", "setup_path_model.")  # in-process: no command line, trusted explicitly
    store = f"run.store_dir={tmp_path / 'store'}"
    overrides = ["model=python", "model.object._target_=setup_path_model.FixedPathModel",
                 "+model.object.load_in_setup=true", "benchmark.num_samples=3", "metric=[psnr]", "run.progress=off",
                 "run.report=false", store]
    first = run_from_config(compose(overrides), output_dir=tmp_path / "first")
    again = run_from_config(compose(overrides), output_dir=tmp_path / "again")
    assert (first.generated, again.generated, again.cached) == (3, 0, 3)
    np.save(checkpoint, np.array([40]))
    retrained = run_from_config(compose(overrides), output_dir=tmp_path / "retrained")
    assert (retrained.generated, retrained.cached) == (3, 0)
    assert _psnr(tmp_path / "retrained") < _psnr(tmp_path / "first") - 5
    manifest = _manifest(tmp_path / "retrained")
    events = [json.loads(line) for line in (tmp_path / "retrained" / "events.jsonl").read_text().splitlines()]
    changed = [e for e in events if "model_state_changed_by_setup" in json.dumps(e)]
    assert len(changed) == 1 and changed[0]["key"] == manifest["model"]["key"]  # the manifest names the settled key
    # the same object from Python, set up by the same run: the same identity as the config's
    import setup_path_model

    model = setup_path_model.FixedPathModel(load_in_setup=True)
    from_python = wfeval.evaluate(model=model, benchmark="gridworld", metrics=["psnr"],
                                  overrides=["benchmark.num_samples=3", store, "run.progress=off"],
                                  run_dir=tmp_path / "python")
    assert from_python.generated == 3 and from_python["gridworld.psnr"].value == _psnr(tmp_path / "retrained")
    assert _manifest(tmp_path / "python")["model"]["fingerprint"]["state"]["state"] == \
        manifest["model"]["fingerprint"]["state"]["state"]


def test_run_regenerate_generates_every_sample_again(tmp_path):
    overrides = ["model=noisy", "benchmark.num_samples=3", "metric=[psnr]", "run.progress=off", "run.report=false",
                 f"run.store_dir={tmp_path / 'store'}"]
    first = run_from_config(compose(overrides), output_dir=tmp_path / "first")
    cached = run_from_config(compose(overrides), output_dir=tmp_path / "cached")
    forced = run_from_config(compose([*overrides, "run.regenerate=true"]), output_dir=tmp_path / "forced")
    assert (first.generated, cached.cached, forced.generated, forced.cached) == (3, 3, 3, 0)
    assert _psnr(tmp_path / "forced") == _psnr(tmp_path / "first")  # the same model, generated again
    assert _manifest(tmp_path / "forced")["config_hash"] == _manifest(tmp_path / "cached")["config_hash"]
