"""A plain run's composed config kept (wfeval.pipeline.compose_cache): the kept node is the node Hydra
composes afresh, and a changed input (a config file, a new option file, an override, the environment,
the installed plugins) is composed again, never served a stale node; another working folder or other plain
values (``benchmark.num_samples=3``) are set on a kept node as Hydra sets them."""

from __future__ import annotations

import json
import pickle
import sys
import warnings

import pytest
from hydra._internal.config_loader_impl import ConfigLoaderImpl
from omegaconf import DictConfig, ListConfig, OmegaConf

from wfeval.cli.boundary import initialized
from wfeval.config import derive
from wfeval.pipeline import compose_cache, compose_values
from wfeval.pipeline.compose import compose_node, run_config_of

QUICK = ["benchmark.num_samples=1", "metric=[psnr]"]


@pytest.fixture
def here(monkeypatch, tmp_path):
    """A working folder and a cache folder of the test's own; Hydra's compose API initialized."""
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WFEVAL_CACHE", str(tmp_path / "cache"))
    with initialized():
        yield tmp_path


def _composed(overrides):
    """(node, whether Hydra composed it now)."""
    calls = []

    def compose(given):
        calls.append(1)
        return compose_node(given)
    return compose_cache.composed(overrides, "config", compose), bool(calls)


def _shape(node, path="") -> list:
    """Every node's key, value, class, declared types and flags: what a pickled node must give back."""
    out = [(path, type(node).__name__, OmegaConf.get_type(node), node._metadata.ref_type,
            node._metadata.optional, node._get_flag("struct"), node._get_flag("readonly"))]
    if isinstance(node, DictConfig):
        out.append((path, node._metadata.key_type, node._metadata.element_type))
        for key in node.keys():
            out += _shape(node._get_node(key), f"{path}.{key}")
    elif isinstance(node, ListConfig):
        for i in range(len(node)):
            out += _shape(node._get_node(i), f"{path}[{i}]")
    else:
        out.append((path, node._value()))
    return out


def test_a_kept_composition_is_the_node_hydra_composes(here):
    overrides = [*QUICK, "model=static", "extra_metrics=[mse]"]
    fresh, composed_now = _composed(overrides)
    kept, composed_again = _composed(overrides)
    assert composed_now and not composed_again
    assert OmegaConf.to_yaml(kept) == OmegaConf.to_yaml(fresh)
    assert _shape(kept) == _shape(fresh)
    assert OmegaConf.get_type(kept.task).__name__ == "TaskSchema"
    assert OmegaConf.get_type(kept.model) is derive.served_class("schema/model/static", ())
    assert run_config_of(kept) == run_config_of(fresh)
    kept.benchmark.num_samples = "3"  # the schema's type still converts a value set later, as the fresh node's
    assert kept.benchmark.num_samples == 3


def test_another_run_folder_gets_the_node_hydra_composes_for_it(here):
    _composed([*QUICK, f"hydra.run.dir={here / 'first'}"])
    kept, composed_now = _composed([*QUICK, f"hydra.run.dir={here / 'second'}"])
    assert not composed_now
    fresh = compose_node([*QUICK, f"hydra.run.dir={here / 'second'}"])
    assert OmegaConf.to_yaml(kept) == OmegaConf.to_yaml(fresh) and _shape(kept) == _shape(fresh)
    assert kept.hydra.run.dir == str(here / "second")
    _, composed_now = _composed([*QUICK, "hydra.run.dir=runs/${now:%H}"])  # not a plain path: its own key
    assert composed_now


def test_a_changed_config_file_a_new_option_file_or_another_override_is_composed_again(here):
    (here / "conf" / "model").mkdir(parents=True)
    mine = here / "conf" / "model" / "mine.yaml"
    mine.write_text("defaults: [static, _self_]\nname: mine\n")
    overrides = [*QUICK, "model=mine", f"hydra.searchpath=[file://{here / 'conf'}]"]
    assert _composed(overrides)[0].model.name == "mine"
    assert not _composed(overrides)[1]
    mine.write_text("defaults: [static, _self_]\nname: yours\n")  # same size: the bytes are hashed
    node, composed_now = _composed(overrides)
    assert composed_now and node.model.name == "yours"
    (here / "conf" / "model" / "other.yaml").write_text("defaults: [static, _self_]\nname: other\n")
    assert _composed(overrides)[1]  # a new option file in a folder of the search path
    node, composed_now = _composed([*overrides, "benchmark.num_samples=2"])
    assert composed_now and node.benchmark.num_samples == 2


def test_another_environment_or_set_of_plugins_is_composed_again_another_working_folder_is_not(here, monkeypatch):
    assert _composed(QUICK)[1] and not _composed(QUICK)[1]
    monkeypatch.setenv("WFEVAL_SOMETHING", "1")  # ${oc.env:...} in a config
    assert _composed(QUICK)[1] and not _composed(QUICK)[1]
    (here / "elsewhere").mkdir()
    monkeypatch.chdir(here / "elsewhere")  # hydra.runtime.cwd: written where Hydra writes it
    node, composed_now = _composed(QUICK)
    assert not composed_now and node.hydra.runtime.cwd == str(here / "elsewhere")
    assert _shape(node) == _shape(compose_node(QUICK))
    from wfeval.config import plugins

    index = plugins.installed_plugins()
    monkeypatch.setattr(plugins, "installed_plugins", lambda: plugins.PluginIndex(index.offers, index.config_dirs,
                                                                                 index.broken, "another key"))
    assert _composed(QUICK)[1]


def test_a_composition_that_warned_or_read_a_plugins_code_is_not_kept(here, monkeypatch):
    def warned(given):
        warnings.warn("a deprecated config", UserWarning)
        return compose_node(given)
    with pytest.warns(UserWarning, match="a deprecated config"):
        compose_cache.composed(QUICK, "config", warned)  # the warning is shown as it was
    assert _composed(QUICK)[1]  # not kept

    def with_plugin_code(given):
        derive._PLUGIN_LOADS[0] += 1  # as a config derived from a plugin's class is loaded
        return compose_node(given)
    compose_cache.composed([*QUICK, "model=static"], "config", with_plugin_code)
    assert _composed([*QUICK, "model=static"])[1]


def test_a_corrupt_or_foreign_kept_file_is_not_read(here):
    _composed(QUICK)
    [path] = (here / "cache" / "compositions").glob("*.pickle")
    data = path.read_bytes()
    path.write_bytes(data[:-1] + bytes([data[-1] ^ 1]))  # a bit flipped: the digest disagrees
    assert _composed(QUICK)[1]
    import hashlib

    import os

    from wfeval.storage.artifacts import ArtifactStore

    for foreign in ((None, print), (None, os.system), (None, {"a": 1}), (None, ArtifactStore(here / "store"))):
        data = pickle.dumps(foreign)  # functions, a class whose making does something (a folder), or not a node
        path.write_bytes(hashlib.sha256(data).digest() + data)
        node, composed_now = _composed(QUICK)
        assert composed_now and OmegaConf.to_yaml(node) == OmegaConf.to_yaml(compose_node(QUICK))


def test_a_run_on_a_kept_composition_writes_what_a_fresh_one_writes(monkeypatch, tmp_path):
    """Two plain runs in one folder: the second composes nothing, and its run folder matches the first."""
    from wfeval.cli.run import main

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("WFEVAL_CACHE", str(tmp_path / "cache"))
    calls = []
    load = ConfigLoaderImpl.load_configuration

    def counted(self, *args, **kwargs):
        calls.append(1)
        return load(self, *args, **kwargs)

    monkeypatch.setattr(ConfigLoaderImpl, "load_configuration", counted)
    import logging

    handlers, level = list(logging.root.handlers), logging.root.level
    try:
        for name in ("first", "second"):
            monkeypatch.setattr(sys, "argv", ["wfeval", *QUICK, "run.progress=off", "run.report=false",
                                              f"run.store_dir={tmp_path / 'store'}",
                                              f"hydra.run.dir={tmp_path / name}"])
            main()
    finally:
        logging.root.handlers[:], logging.root.level = handlers, level
    assert len(calls) == 1
    first, second = (json.loads((tmp_path / n / "results.json").read_text()) for n in ("first", "second"))
    assert first["metrics"] == second["metrics"] and first["metric_selection"] == second["metric_selection"]
    for name in ("config.yaml", "overrides.yaml", "hydra.yaml"):
        texts = [(tmp_path / n / ".hydra" / name).read_text().replace(str(tmp_path / n), "<run>")
                 for n in ("first", "second")]
        assert texts[0] == texts[1], name


def _same(kept, overrides):
    fresh = compose_node(overrides)
    assert OmegaConf.to_yaml(kept) == OmegaConf.to_yaml(fresh)
    assert _shape(kept) == _shape(fresh)
    assert run_config_of(kept) == run_config_of(fresh)


VALUES = [  # plain values of every kind a command line gives, in the places Hydra records them
    ["benchmark.num_samples=3", "model=static", "run.store_dir=/tmp/a b", "run.seed=-2"],
    ["run.store_dir=/x/${benchmark.num_samples}", "benchmark.num_samples=2", "run.progress=off"],
    ["run.report=false", "model=static", "benchmark.num_samples=4", "run.progress=off", "run.seed=7"],
]


@pytest.mark.parametrize("values", VALUES, ids=["ints-paths", "interpolation", "bools"])
def test_other_plain_values_are_set_on_the_kept_node_as_hydra_sets_them(here, values):
    first = [*QUICK[1:], *values]
    _composed([*first, f"hydra.run.dir={here / 'first'}"])
    other = [v.replace("3", "5").replace("/tmp/a b", "/tmp/c").replace("=2", "=1").replace("=4", "=6")
             .replace("=7", "=8").replace("=false", "=true") for v in values]
    for overrides in ([*QUICK[1:], *values], [*QUICK[1:], *other], [*QUICK[1:], *reversed(other)]):
        kept, composed_now = _composed([*overrides, f"hydra.run.dir={here / 'run'}"])
        assert not composed_now, overrides
        _same(kept, [*overrides, f"hydra.run.dir={here / 'run'}"])
        assert OmegaConf.to_container(kept.hydra.overrides.task) == overrides


def test_a_value_hydra_refuses_is_refused_as_hydra_refuses_it(here):
    _composed(QUICK)
    for bad in ("benchmark.num_samples=many", "benchmark.no_such_key=1"):
        with pytest.raises(Exception) as served:
            _composed([*QUICK, bad])
        with pytest.raises(Exception) as fresh:
            compose_node([*QUICK, bad])
        assert type(served.value) is type(fresh.value) and str(served.value) == str(fresh.value)


def test_only_plain_values_of_the_jobs_config_are_set_aside(here):
    given = ["model=static", "benchmark.num_samples=2", "+run.extra=1", "~run.seed", "extra_metrics=[mse]",
             "metric=[psnr]", "benchmark.metrics=[psnr]", "run.seed=1,2", "hydra.job.chdir=false",
             "run.progress=off", "model.name=x", "run.limit=3", "run.limit={a: 1}"]
    base, values = compose_values.plain_values(given)
    # set aside: plain single values of dotted keys; not: groups, +/~, extra_metrics, lists, sweeps,
    # Hydra's keys, a key another config override also sets (run.limit, twice: Hydra's order decides)
    assert [o.input_line for o in values] == ["benchmark.num_samples=2", "run.progress=off", "model.name=x"]
    assert base == [o for o in given if o not in ("benchmark.num_samples=2", "run.progress=off", "model.name=x")]
    assert compose_values.plain_values([*given, "hydra.searchpath=[file:///x]"])[1] == []


def test_values_after_a_mapping_that_sets_the_same_key_keep_hydras_order(here):
    overrides = [*QUICK, "benchmark={num_samples: 5}", "benchmark.num_samples=2"]
    _composed(overrides)
    kept, _ = _composed(overrides)
    _same(kept, overrides)
    assert kept.benchmark.num_samples == 2


def test_an_interpolation_in_an_override_stays_text_in_hydras_record_with_extra_metrics(here):
    value = "run.store_dir=/x/${benchmark.num_samples}"
    node = compose_node([*QUICK, "extra_metrics=[mse]", value])
    record = OmegaConf.to_container(node.hydra, resolve=False)
    assert record["overrides"]["task"] == [*QUICK, "extra_metrics=[mse]", value]
    assert value in record["job"]["override_dirname"]
