"""Schemas are stored in Hydra's ConfigStore unbuilt: a config builds only the ones it loads, and
Hydra's copies of the store (one per config repository) share them instead of deep-copying."""

from __future__ import annotations

import copy
import pickle

from hydra.core.config_store import ConfigStore
from omegaconf import OmegaConf

from tests.conftest import compose
from wfeval.config import register_schemas
from wfeval.config.schema import store_schema


def _entries(node=None, prefix=""):
    node = ConfigStore.instance().repo if node is None else node
    for key, value in node.items():
        if isinstance(value, dict):
            yield from _entries(value, f"{prefix}{key}/")
        else:
            yield f"{prefix}{key}", value


def _built() -> set[str]:
    return {path for path, entry in _entries() if path.startswith(("schema/", "wfeval_schema")) and
            "node" in vars(entry)}


def _shape(cfg) -> list:
    """Every node's key, node class, declared type, optional flag and object type (what to_yaml leaves out)."""
    out = []
    for key in cfg.keys():
        node = cfg._get_node(key)
        meta = node._metadata
        out.append((key, type(node).__name__, repr(meta.ref_type), meta.optional,
                    getattr(meta.object_type, "__name__", repr(meta.object_type))))
        if OmegaConf.is_dict(node) and not node._is_none() and not node._is_missing():
            out.append((key, _shape(node)))
    return [(type(cfg).__name__, getattr(cfg._metadata.object_type, "__name__", None))] + out


def test_composing_the_default_config_builds_only_the_schemas_it_loads():
    register_schemas()  # fresh, unbuilt entries
    assert _built() == set()
    compose()
    assert _built() == {"wfeval_schema.yaml", "schema/benchmark/gridworld.yaml", "schema/model/oracle.yaml",
                        "schema/protocol/open_loop.yaml"} | {
        f"schema/metric/{m}.yaml" for m in ("generated_rate", "artifact_count", "psnr", "ssim", "flicker",
                                             "action_following", "agent_position_error")}


def test_a_copy_of_the_store_shares_the_schema_entries_instead_of_copying_them():
    register_schemas()
    store = ConfigStore.instance()
    copied = copy.deepcopy(store)
    for path, entry in _entries():
        if path.startswith("schema/"):
            group, name = path.rsplit("/", 1)
            assert copied._open(group)[name] is entry, path
    assert _built() == set()  # copying built nothing


def test_every_lazily_stored_schema_loads_as_configstore_store_would():
    register_schemas()
    store = ConfigStore.instance()
    schemas = [(path, entry._source) for path, entry in _entries() if path.startswith("schema/")]
    assert len(schemas) >= 30
    for path, source in schemas:
        group, name = path.rsplit("/", 1)
        node = source if isinstance(source, type) else source()
        lazy = store.load(path)
        store.store(group=group, name=name, node=node)  # the eager entry, in the same place
        eager = store.load(path)
        assert OmegaConf.to_yaml(lazy.node) == OmegaConf.to_yaml(eager.node), path
        assert _shape(lazy.node) == _shape(eager.node), path
        if isinstance(source, type):
            assert OmegaConf.get_type(lazy.node) is source
        assert (lazy.name, lazy.group, lazy.package, lazy.provider) == (eager.name, eager.group, eager.package,
                                                                        eager.provider)
    register_schemas()  # leave lazy entries behind


def test_a_loaded_schema_is_a_copy_the_caller_may_change():
    register_schemas()
    first = ConfigStore.instance().load("schema/model/static.yaml")
    first.node._target_ = "changed"
    assert ConfigStore.instance().load("schema/model/static.yaml").node._target_ == \
        "wfeval.benchmarks.gridworld.baselines.StaticModel"


def test_the_store_pickles_for_the_launchers_with_entries_still_unbuilt():
    register_schemas()
    ConfigStore.instance().load("schema/metric/psnr.yaml")
    restored = pickle.loads(pickle.dumps(ConfigStore.instance()))
    entry = restored._open("schema/metric")["psnr.yaml"]
    assert "node" not in vars(entry)
    assert OmegaConf.to_yaml(entry.node) == OmegaConf.to_yaml(ConfigStore.instance().load("schema/metric/psnr.yaml").node)


def test_a_schema_that_fails_to_build_says_which_one():
    def broken():
        raise AttributeError("no such class")

    store_schema("schema/test_only", "broken", broken)
    try:
        ConfigStore.instance().load("schema/test_only/broken.yaml")
    except RuntimeError as exc:
        assert "schema/test_only/broken.yaml" in str(exc) and "no such class" in str(exc)
    else:
        raise AssertionError("no error")
    finally:
        del ConfigStore.instance().repo["schema"]["test_only"]
