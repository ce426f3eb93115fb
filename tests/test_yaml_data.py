"""wfeval reads YAML data with libyaml's safe loader where PyYAML has it: the values are the pure-Python
safe loader's, on every config file wfeval ships and on a run folder's recorded configs."""

from __future__ import annotations

import pytest
import yaml

from tests.conftest import ROOT
from wfeval.utils.yaml_data import load_yaml


def test_libyaml_is_there_and_reads_every_shipped_config_as_the_python_loader_does():
    assert yaml.__with_libyaml__  # else load_yaml falls back to the same pure-Python loader
    files = sorted((ROOT / "conf").rglob("*.yaml")) + sorted((ROOT / "examples").rglob("*.yaml"))
    assert len(files) > 80
    for path in files:
        text = path.read_text(encoding="utf-8")
        assert load_yaml(text) == yaml.safe_load(text), path


def test_a_recorded_run_config_reads_the_same_and_bad_yaml_raises_the_same_error_type(tmp_path):
    from omegaconf import OmegaConf

    from tests.conftest import compose

    text = OmegaConf.to_yaml(compose(["model=noisy", "run.seed=3", "benchmark.num_samples=2"]))
    assert load_yaml(text) == yaml.safe_load(text)
    assert load_yaml(text)["model"]["name"] == "noisy" and load_yaml(text)["run"]["seed"] == 3
    for bad in ("a: [1, 2", "a: b: c", "\tkey: 1"):
        with pytest.raises(yaml.YAMLError):
            yaml.safe_load(bad)
        with pytest.raises(yaml.YAMLError):
            load_yaml(bad)
