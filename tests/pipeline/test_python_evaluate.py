"""wfeval.evaluate: a model object evaluated from Python runs the CLI's pipeline and gives its numbers."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest
import torch
import wfeval_test_live
import wfeval_test_models

import wfeval
from tests.conftest import ROOT, cli_env, run_cli, run_python
from wfeval.config.errors import ConfigError

BASE = ["benchmark.num_samples=4"]


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)  # run folders default to ./outputs/runs, as the CLI's


def _store(tmp_path):
    return f"run.store_dir={tmp_path / 'store'}"


def test_two_calls_in_one_process_give_the_cli_numbers_to_the_last_digit(tmp_path):
    cli = run_cli(["model=python", "model.object._target_=wfeval_test_models.RecordingModel", "+model.object.noise=4",
                   *BASE, "metric=[psnr,ssim,flicker,action_following]", f"run.store_dir={tmp_path / 'cli_store'}",
                   f"hydra.run.dir={tmp_path / 'cli'}", "run.report=false"], cwd=tmp_path)
    assert cli.returncode == 0, cli.stderr
    expected = json.loads((tmp_path / "cli" / "results.json").read_text())
    for call in range(2):
        results = wfeval.evaluate(model=wfeval_test_models.RecordingModel(noise=4), benchmark="gridworld",
                                  metrics=["psnr", "ssim", "flicker", "action_following"], model_version="v1",
                                  overrides=[*BASE, _store(tmp_path)], run_dir=tmp_path / f"call{call}")
        assert results.document["results"] == expected["results"]
        assert results.document["scorecard"] == expected["scorecard"]
        assert (results.generated, results.cached) == ((4, 0) if call == 0 else (0, 4))
        psnr = results["gridworld.psnr"]
        aggregate = expected["results"]["gridworld.psnr"]
        assert psnr.value == aggregate["diagnostics"]["value"] and psnr.value > 20
        assert psnr.interval == (aggregate["confidence_interval"]["low"], aggregate["confidence_interval"]["high"])
        assert (psnr.n_valid, psnr.n_total, psnr.n_skipped, psnr.coverage) == (4, 4, 0, 1.0)
        assert results.run_dir == tmp_path / f"call{call}"
        assert json.loads((results.run_dir / "results.json").read_text()) == results.document
        assert not (results.run_dir / "report.html").exists()  # the report is optional (report=True writes it)
        manifest = json.loads((results.run_dir / "manifest.json").read_text())
        assert manifest["model"]["fingerprint"]["class"] == "wfeval_test_models.RecordingModel"
        assert manifest["model"]["fingerprint"]["state"]["model_version"] == "v1"
        assert len(manifest["model"]["fingerprint"]["state"]["state"]["sha256"]) == 64


def test_weights_changed_in_place_are_generated_again_never_served_from_the_cache(tmp_path):
    net = wfeval_test_live.ShiftNet(offset=3.0)
    common = dict(metrics=["psnr"], overrides=[*BASE, _store(tmp_path)])
    first = wfeval.evaluate(model=net, **common)
    again = wfeval.evaluate(model=net, **common)
    assert (first.generated, again.generated, again.cached) == (4, 0, 4)
    assert again["gridworld.psnr"].value == first["gridworld.psnr"].value
    with torch.no_grad():
        net.offset.add_(5.0)  # a training step: same object, same code, new weights
    changed = wfeval.evaluate(model=net, **common)
    assert (changed.generated, changed.cached) == (4, 0)
    assert changed["gridworld.psnr"].value < first["gridworld.psnr"].value  # 8 levels off instead of 3
    net.train(False)  # the same weights in eval mode are another state too
    assert wfeval.evaluate(model=net, **common).generated == 4
    holder = wfeval_test_live.Holder(offset=3.0)  # a wrapper holding the network in an attribute
    held = wfeval.evaluate(model=holder, **common)
    with torch.no_grad():
        holder.net.offset.add_(1.0)
    assert (held.generated, wfeval.evaluate(model=holder, **common).generated) == (4, 4)
    manifest = json.loads((held.run_dir / "manifest.json").read_text())
    assert manifest["model"]["fingerprint"]["state"]["state"]["arrays"] == 1  # the held network's one weight


def test_an_object_whose_state_cannot_be_seen_needs_a_model_version(tmp_path):
    common = dict(metrics=["psnr"], overrides=[*BASE, _store(tmp_path)])
    with pytest.raises(ConfigError, match=r"model\.source: a builtins\.list_iterator object.*model_version=\.\.\. "
                                          r"that changes whenever its weights do"):
        wfeval.evaluate(model=wfeval_test_live.Stateless(source=iter([1])), **common)
    one = wfeval.evaluate(model=wfeval_test_live.Stateless(source=iter([1])), model_version=1, **common)
    two = wfeval.evaluate(model=wfeval_test_live.Stateless(source=iter([1])), model_version=2, **common)
    assert (one.generated, two.generated) == (4, 4)
    assert "list_iterator" in json.loads((two.run_dir / "manifest.json").read_text())["model"]["fingerprint"][
        "state"]["state_not_hashed"]
    assert json.loads((two.run_dir / "manifest.json").read_text())["model"]["version"] == "2"


def test_every_command_line_override_works_and_config_errors_say_what_the_cli_says(tmp_path):
    model = wfeval_test_live.ShiftNet()
    results = wfeval.evaluate(model=model, metrics="psnr", protocol="autoregressive", report=True,
                              overrides=["benchmark.num_samples=3", "model.batch_size=2", "model.name=mine",
                                         _store(tmp_path)], run_dir=tmp_path / "run")
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert (manifest["model"]["name"], manifest["protocol"]["driver"], results["gridworld.psnr"].n_total) == \
        ("mine", "autoregressive", 3)
    assert (tmp_path / "run" / "report.html").is_file()
    with pytest.raises(ConfigError, match="fvd"):  # the CLI's 'did you mean'
        wfeval.evaluate(model=model, metrics=["fvdd"], overrides=[_store(tmp_path)])
    with pytest.raises(ConfigError, match="run.batch_size"):
        wfeval.evaluate(model=model, metrics=["psnr"], overrides=["run.batch_size=0", _store(tmp_path)])
    with pytest.raises(TypeError, match="model object itself"):
        wfeval.evaluate(model="oracle")


def test_a_run_folder_of_evaluate_replays_to_the_same_results(tmp_path):
    results = wfeval.evaluate(model=wfeval_test_live.ShiftNet(), metrics=["psnr", "ssim"],
                              overrides=[*BASE, _store(tmp_path)], run_dir=tmp_path / "run")
    done = run_python(["-m", "wfeval.replay", str(tmp_path / "run"), "--out", str(tmp_path / "re")],
                      cwd=tmp_path, env=cli_env())
    assert done.returncode == 0, done.stderr
    assert json.loads((tmp_path / "re" / "results.json").read_text())["results"] == results.document["results"]


def test_inside_the_callers_own_hydra_app_the_run_uses_wfevals_configs_and_leaves_the_app_as_it_was(tmp_path):
    from hydra import compose, initialize_config_dir
    from hydra.core.global_hydra import GlobalHydra

    app = tmp_path / "app_conf"
    app.mkdir()
    (app / "train.yaml").write_text("lr: 0.1\n")
    with initialize_config_dir(str(app), version_base="1.3"):
        results = wfeval.evaluate(model=wfeval_test_live.ShiftNet(), task="goal_reaching",
                                  overrides=["benchmark.num_samples=2", _store(tmp_path)])
        assert results["gridworld.goal_success"].n_total == 2  # the planning metrics come from wfeval's configs
        assert GlobalHydra.instance().is_initialized() and compose(config_name="train").lr == 0.1


@pytest.mark.subprocess  # an import-laziness probe
def test_importing_wfeval_imports_nothing_heavy_until_evaluate_is_used():
    code = ("import sys, wfeval; heavy = [m for m in ('hydra', 'omegaconf', 'numpy', 'torch') if m in sys.modules]; "
            "assert not heavy, heavy; f = wfeval.evaluate; assert callable(f) and 'torch' not in sys.modules; "
            "print('ok')")
    done = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True)
    assert done.stdout.strip() == "ok", done.stderr
