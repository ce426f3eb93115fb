"""A command composes its config once (counted at Hydra's config loader), the metric nodes the protocol,
the task and ``extra_metrics`` add included; ``--help`` and ``wfeval.evaluate`` too."""

from __future__ import annotations

import json
import logging
import sys

import pytest
import wfeval_test_models
from hydra._internal.config_loader_impl import ConfigLoaderImpl

import wfeval
from wfeval.cli.run import main

QUICK = ["benchmark.num_samples=1", "run.report=false", "run.progress=off"]


@pytest.fixture
def compositions(monkeypatch, tmp_path):
    """The number of configs Hydra's loader composes in this test (each ``load_configuration``)."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WFEVAL_STORE", str(tmp_path / "store"))
    calls: list[list[str]] = []
    load = ConfigLoaderImpl.load_configuration

    def counted(self, config_name, overrides, *args, **kwargs):
        calls.append(list(overrides))
        return load(self, config_name, overrides, *args, **kwargs)

    monkeypatch.setattr(ConfigLoaderImpl, "load_configuration", counted)
    handlers, level = list(logging.root.handlers), logging.root.level  # a run configures Hydra's logging
    yield calls
    logging.root.handlers[:], logging.root.level = handlers, level


def _cli(monkeypatch, *args: str) -> None:
    monkeypatch.setattr(sys, "argv", ["wfeval", *args])
    main()


def test_a_default_run_composes_its_config_once(compositions, monkeypatch, tmp_path):
    _cli(monkeypatch, f"hydra.run.dir={tmp_path / 'run'}", *QUICK)
    assert len(compositions) == 1, compositions
    selection = json.loads((tmp_path / "run" / "results.json").read_text())["metric_selection"]
    assert set(selection.values()) == {"benchmark"} and "psnr" in selection


def test_a_task_and_extra_metrics_compose_no_more_often_than_the_default_run(compositions, monkeypatch, tmp_path):
    _cli(monkeypatch, f"hydra.run.dir={tmp_path / 'run'}", *QUICK, "task=controllability", "extra_metrics=[mse]")
    assert len(compositions) == 1, compositions
    selection = json.loads((tmp_path / "run" / "results.json").read_text())["metric_selection"]
    assert list(selection.items())[-3:] == [("action_sensitivity", "protocol"), ("idm_accuracy", "protocol"),
                                            ("mse", "extra_metrics")]
    assert (tmp_path / "run" / ".hydra" / "overrides.yaml").read_text().splitlines() == [
        *(f"- {o}" for o in QUICK), "- task=controllability", "- extra_metrics=[mse]"]


def test_help_composes_once(compositions, monkeypatch, capsys):
    _cli(monkeypatch, "--help", "task=controllability", "extra_metrics=[mse]")
    assert len(compositions) == 1, compositions
    assert "== Config ==" in capsys.readouterr().out


def test_wfeval_evaluate_composes_once_per_distinct_call(compositions, tmp_path):
    for call in range(2):
        results = wfeval.evaluate(model=wfeval_test_models.RecordingModel(noise=4), task="controllability",
                                  overrides=[*QUICK, "extra_metrics=[mse]"], run_dir=tmp_path / f"call{call}")
        assert results.document["metric_selection"]["mse"] == "extra_metrics"
    assert len(compositions) == 1, compositions  # the second call reuses the first one's run config
