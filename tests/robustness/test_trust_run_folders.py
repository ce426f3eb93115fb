"""A run folder is a file anyone could have written: replay, merge, compare, export and
run.from_run rebuild metrics only through the registry and never build a target taken from it;
resume prints its command and refuses run-folder overrides that name untrusted code."""

from __future__ import annotations

import json
import shutil

import pytest
import yaml

from tests.conftest import ROOT, only_run_dir, run_python
from tests.robustness._trust_support import assert_refused, cli, hostile_pickle, untrusted_env

MODEL = ["model=python", "model.object._target_=wfeval_test_models.RecordingModel"]


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    """Two shard runs of a python-adapter model (target given on the command line) and their merge."""
    root = tmp_path_factory.mktemp("trust_runs")
    proc = cli(root, "-m", "run.shard=0/2,1/2", *MODEL, "benchmark.num_samples=4",
               "metric=[generated_rate,psnr,action_following]")
    assert proc.returncode == 0, proc.stderr[-3000:]
    return only_run_dir(root / "outputs" / "multirun")


@pytest.fixture
def run_copy(sweep, tmp_path):
    """A copy of shard 0 (and of shard 1 next to it), free to tamper with."""
    for name in ("0_python", "1_python"):
        shutil.copytree(sweep / name, tmp_path / name)
    return tmp_path / "0_python"


def _module(name, *args, env=None, cwd=None):
    return run_python(["-m", name, *map(str, args)], env=env or untrusted_env(), cwd=cwd or ROOT, timeout=300)


def _tamper_config(run_dir, edit):
    path = run_dir / ".hydra" / "config.yaml"
    cfg = yaml.safe_load(path.read_text())
    edit(cfg)
    path.write_text(yaml.safe_dump(cfg))


def _evil_metric(sentinel):
    def edit(cfg):
        cfg["metric"]["psnr"] = {"_target_": "builtins.open", "file": str(sentinel), "mode": "w"}
    return edit


def _tamper_everything(run_dir, sentinel):
    """A careful forger: the config and the manifest agree on the hostile class."""
    _tamper_config(run_dir, _evil_metric(sentinel))
    manifest = json.loads((run_dir / "manifest.json").read_text())
    manifest["metrics"]["psnr"]["class"] = "builtins.open"
    (run_dir / "manifest.json").write_text(json.dumps(manifest))


def test_replay_refuses_a_folder_whose_config_and_manifest_disagree(run_copy, tmp_path):
    sentinel = tmp_path / "SENTINEL"
    _tamper_config(run_copy, _evil_metric(sentinel))
    assert_refused(_module("wfeval.replay", run_copy), "the run records class 'wfeval.metrics.reference.PSNR'",
                   "names 'builtins.open'")
    assert not sentinel.exists()


def test_replay_of_a_genuine_run_still_rebuilds_the_same_results(run_copy):
    proc = _module("wfeval.replay", run_copy)
    assert proc.returncode == 0, proc.stderr
    replayed = json.loads((run_copy / "replay" / "results.json").read_text())
    original = json.loads((run_copy / "results.json").read_text())
    assert replayed["results"] == original["results"]


def test_replay_never_builds_a_target_from_the_run_folder(run_copy, tmp_path):
    sentinel = tmp_path / "SENTINEL"
    _tamper_everything(run_copy, sentinel)
    proc = _module("wfeval.replay", run_copy)
    assert_refused(proc, str(run_copy), "'psnr'", "'builtins.open' is not a registered metric")
    assert not sentinel.exists()


def test_replay_never_runs_a_torch_load_nested_in_a_metric_parameter(run_copy, tmp_path):
    sentinel = tmp_path / "SENTINEL"
    payload = hostile_pickle(tmp_path / "x.pt", sentinel)

    def edit(cfg):
        cfg["metric"]["action_following"]["locator"] = {"_target_": "torch.load", "f": str(payload),
                                                        "weights_only": False}
    _tamper_config(run_copy, edit)
    proc = _module("wfeval.replay", run_copy, "--check")
    # the option is left out (the rows are aggregated by the registered class the run records), never run
    assert proc.returncode == 0, proc.stderr
    assert "metric 'action_following'" in proc.stdout and "locator._target_='torch.load' names code" in proc.stdout
    assert "matches the run's results.json byte for byte" in proc.stdout
    assert not sentinel.exists()


def test_replay_never_imports_a_locator_import_path_string(run_copy):
    def edit(cfg):
        cfg["metric"]["action_following"]["locator"] = "os:getcwd"
    _tamper_config(run_copy, edit)
    proc = _module("wfeval.replay", run_copy)
    assert proc.returncode == 0 and "locator='os:getcwd' is an import path" in proc.stdout, proc.stderr


def test_replay_refuses_parameters_the_metric_schema_does_not_have(run_copy):
    def edit(cfg):
        cfg["metric"]["psnr"]["exploit"] = 1
    _tamper_config(run_copy, edit)
    assert_refused(_module("wfeval.replay", run_copy), "'psnr'", "exploit")


def test_replay_with_a_manifest_naming_an_unregistered_class_is_refused(run_copy, tmp_path):
    manifest = json.loads((run_copy / "manifest.json").read_text())
    manifest["metrics"]["psnr"]["class"] = "numpy.load"
    (run_copy / "manifest.json").write_text(json.dumps(manifest))
    assert_refused(_module("wfeval.replay", run_copy), "the run records class 'numpy.load'", "nothing is rebuilt")


def test_replay_refuses_a_metric_whose_config_the_folder_does_not_record(run_copy):
    """Nothing is composed from today's packaged files in its place (docs/trust.md)."""
    _tamper_config(run_copy, lambda cfg: cfg["metric"].pop("psnr"))
    assert_refused(_module("wfeval.replay", run_copy), "metric 'psnr': .hydra/config.yaml does not record its config")


def test_merge_never_builds_a_target_from_a_shard(run_copy, tmp_path):
    sentinel = tmp_path / "SENTINEL"
    _tamper_everything(run_copy, sentinel)
    proc = _module("wfeval.merge", run_copy, tmp_path / "1_python", "--out", tmp_path / "merged")
    assert_refused(proc, "'builtins.open' is not a registered metric")
    assert not sentinel.exists()


def test_compare_and_export_read_results_only(run_copy, tmp_path):
    sentinel = tmp_path / "SENTINEL"
    _tamper_config(run_copy, _evil_metric(sentinel))
    assert _module("wfeval.compare", run_copy, "--out", tmp_path / "board").returncode == 0
    assert _module("wfeval.export", run_copy, "--format", "json").returncode == 0
    assert not sentinel.exists()


def test_from_run_takes_generations_not_code_from_the_source_folder(run_copy, tmp_path):
    sentinel = tmp_path / "SENTINEL"
    _tamper_config(run_copy, _evil_metric(sentinel))
    proc = cli(tmp_path, f"run.from_run={run_copy}", "metric=[generated_rate]")
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    assert not sentinel.exists()


def _set_overrides(run_dir, overrides):
    (run_dir / ".hydra" / "overrides.yaml").write_text(yaml.safe_dump(overrides))


def test_resume_refuses_a_crafted_target_and_prints_the_command(run_copy, tmp_path):
    sentinel = tmp_path / "SENTINEL"
    original = yaml.safe_load((run_copy / ".hydra" / "overrides.yaml").read_text())
    _set_overrides(run_copy, [*original, f"+benchmark.hook={{_target_:builtins.open,file:{sentinel},mode:w}}"])
    proc = _module("wfeval.resume", run_copy)
    assert_refused(proc, "would run: python -m wfeval", str(run_copy / ".hydra"),
                   "builtins.open is not trusted", "--trust")
    assert not sentinel.exists()


def test_resume_refuses_trust_granted_by_the_run_folder(run_copy):
    original = yaml.safe_load((run_copy / ".hydra" / "overrides.yaml").read_text())
    _set_overrides(run_copy, [*original, "run.trust=[builtins.]"])
    assert_refused(_module("wfeval.resume", run_copy, "--trust", "wfeval_test_models."),
                   "run.trust=[builtins.]", "a run folder cannot grant trust")


def test_resume_refuses_a_hydra_callback_from_the_run_folder(run_copy):
    hydra_yaml = run_copy / ".hydra" / "hydra.yaml"
    hydra_cfg = yaml.safe_load(hydra_yaml.read_text())
    hydra_cfg["hydra"]["overrides"]["hydra"].append("+hydra.callbacks.x._target_=builtins.exec")
    hydra_yaml.write_text(yaml.safe_dump(hydra_cfg))
    assert_refused(_module("wfeval.resume", run_copy, "--trust", "wfeval_test_models."),
                   "hydra.callbacks.x._target_=builtins.exec", "builtins.exec is not trusted")


def test_resume_runs_the_model_of_the_run_folder_only_once_trusted(run_copy):
    refused = _module("wfeval.resume", run_copy)
    assert_refused(refused, "model.object._target_=wfeval_test_models.RecordingModel")
    trusted = _module("wfeval.resume", run_copy, "--trust", "wfeval_test_models.")
    assert trusted.returncode == 0, trusted.stderr[-2000:]
    assert "wfeval.resume: running: python -m wfeval" in trusted.stderr
    assert json.loads((run_copy / "manifest.json").read_text())["status"] == "completed"


def test_resume_refuses_trust_set_through_the_environment_by_the_run_folder(run_copy):
    hydra_yaml = run_copy / ".hydra" / "hydra.yaml"
    hydra_cfg = yaml.safe_load(hydra_yaml.read_text())
    hydra_cfg["hydra"]["overrides"]["hydra"].append("+hydra.job.env_set.WFEVAL_TRUST=builtins.")
    hydra_yaml.write_text(yaml.safe_dump(hydra_cfg))
    assert_refused(_module("wfeval.resume", run_copy, "--trust", "wfeval_test_models."),
                   "hydra.job.env_set.WFEVAL_TRUST=builtins.", "cannot grant trust through the environment")
