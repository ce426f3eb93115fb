"""Run options are defined once (``RunSettings``): the structured-config schema is derived from it,
``conf/config.yaml`` documents the same options with the same defaults, the task schema is derived
from ``api.WorldTaskConfig``, and one list says which options never change a run's numbers."""

from __future__ import annotations

import dataclasses

import yaml
from omegaconf import MISSING, OmegaConf

from tests.conftest import ROOT
from wfeval.api import WorldTaskConfig
from wfeval.config.run_config import CONFIG_HASH_RUN_KEYS, RESULT_NEUTRAL_RUN_KEYS, RunSettings
from wfeval.config.schema import RunSchema, TaskSchema
from wfeval.report.runs import SILENT_KEYS, Entry, row_key

CONFIG = ROOT / "conf" / "config.yaml"


def _defaults(cls) -> dict:
    out = {}
    for f in dataclasses.fields(cls):
        value = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        out[f.name] = list(value) if isinstance(value, tuple) else value
    return out


def test_the_run_schema_has_the_settings_fields_and_defaults():
    assert _defaults(RunSchema) == _defaults(RunSettings)
    assert OmegaConf.to_container(OmegaConf.structured(RunSchema)) == _defaults(RunSettings)


def test_config_yaml_documents_every_run_option_with_its_default():
    run = yaml.safe_load(CONFIG.read_text(encoding="utf-8"))["run"]
    expected = _defaults(RunSettings)
    del expected["trust"]  # honoured on the command line only: a config file may not set it (docs/trust.md)
    assert list(run) == list(expected)  # same options, same order
    assert run.pop("store_dir") == "${oc.env:WFEVAL_STORE," + expected.pop("store_dir") + "}"
    assert run == expected


def test_the_task_schema_is_the_world_task_config():
    api = {f.name: f for f in dataclasses.fields(WorldTaskConfig)}
    schema = _defaults(TaskSchema)
    assert set(schema) == set(api) - {"schema_version"}
    assert schema.pop("name") == MISSING
    for name, value in schema.items():
        default = api[name].default
        assert value == ({} if default is None and isinstance(value, dict) else
                         list(default) if isinstance(default, tuple) else default), name


def test_one_list_of_result_neutral_keys_for_the_leaderboard_and_the_config_hash():
    assert set(SILENT_KEYS) == {"hydra", *(f"run.{k}" for k in RESULT_NEUTRAL_RUN_KEYS)}
    assert set(CONFIG_HASH_RUN_KEYS) == {"seed", "limit", "from_run", "seed_mode", "verify_artifacts"}  # unchanged
    assert set(CONFIG_HASH_RUN_KEYS) & set(RESULT_NEUTRAL_RUN_KEYS) == {"verify_artifacts"}  # kept for old hashes
    assert {"overlap", "batch_size", "device", "recompute"} <= set(RESULT_NEUTRAL_RUN_KEYS)


def test_a_run_with_overlap_off_shares_its_models_leaderboard_row():
    document = {"model": {"name": "static"}, "benchmark": {"id": "gridworld"}, "results": {}}
    plain = Entry.of_document(document, overrides=["model=static"])
    serial = Entry.of_document(document, overrides=["model=static", "run.overlap=false", "run.batch_size=1"])
    seeded = Entry.of_document(document, overrides=["model=static", "run.seed=3"])
    assert row_key(plain) == row_key(serial) == {"model": "static"}
    assert row_key(seeded) == {"model": "static", "run.seed": "3"}
