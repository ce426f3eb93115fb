"""wfeval's derived schemas and metric suites come from its Hydra config source (a public plugin,
``hydra_plugins.wfeval_configs``): a config builds only the ones it loads, each loads as
``ConfigStore.store`` would have stored it, and nothing of wfeval writes into Hydra's ConfigStore."""

from __future__ import annotations

from hydra.core.config_store import ConfigStore
from omegaconf import OmegaConf

from hydra_plugins.wfeval_configs import WfevalConfigSource
from tests.conftest import compose
from wfeval.config.derive import Served, served_configs


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
    served_configs.cache_clear()  # fresh, unbuilt entries
    compose()
    built = {name for name, entry in served_configs().items() if entry.node is not None}
    assert built == {"wfeval_schema", "schema/benchmark/gridworld", "schema/model/oracle",
                     "schema/protocol/open_loop", "metric/suite_gridworld"} | {
        f"schema/metric/{m}" for m in ("generated_rate", "artifact_count", "psnr", "ssim", "flicker",
                                        "action_following", "agent_position_error", "dynamic_psnr", "dynamic_ssim",
                                        "break_even_horizon")}


def test_nothing_of_wfeval_is_written_into_hydras_config_store():
    compose(["metric=[psnr,fvd]", "model=static"])
    repo = ConfigStore.instance().repo
    assert "schema" not in repo and "wfeval_schema.yaml" not in repo and "suite_gridworld.yaml" not in \
        repo.get("metric", {})


def test_every_served_schema_loads_as_configstore_store_would():
    source = WfevalConfigSource(provider="wfeval", path="wfeval://")
    schemas = [(name, entry) for name, entry in served_configs().items() if name.startswith("schema/")]
    assert len(schemas) >= 30
    for name, entry in schemas:
        value = entry.source if isinstance(entry.source, type) else entry.source()
        eager = OmegaConf.structured(value)  # what ConfigStore.store converts a dataclass to
        loaded = source.load_config(f"{name}.yaml").config
        assert OmegaConf.to_yaml(loaded) == OmegaConf.to_yaml(eager), name
        assert _shape(loaded) == _shape(eager), name
    assert source.is_group("schema/metric") and source.is_config("schema/metric/psnr.yaml")
    assert "psnr" in source.list("schema/metric", None) and "suite_gridworld" in source.list("metric", None)


def test_a_loaded_schema_is_a_copy_the_caller_may_change():
    first = served_configs()["schema/model/static"]()
    first._target_ = "changed"
    assert served_configs()["schema/model/static"]()._target_ == "wfeval.benchmarks.gridworld.baselines.StaticModel"


def test_a_schema_that_fails_to_build_says_which_one():
    def broken():
        raise AttributeError("no such class")

    try:
        Served("schema/test_only/broken", broken)()
    except RuntimeError as exc:
        assert "schema/test_only/broken" in str(exc) and "no such class" in str(exc)
    else:
        raise AssertionError("no error")


def test_the_metrics_a_protocol_or_task_adds_are_served_for_the_composition_under_metric_added():
    nodes = {name: WfevalConfigSource(provider="wfeval", path="wfeval://").load_config(name).config
             for name in ("added_metrics/protocol/counterfactual", "added_metrics/task/memory",
                          "added_metrics/protocol/open_loop")}
    assert list(nodes["added_metrics/protocol/counterfactual"].defaults) == [
        "/metric/action_sensitivity@_global_.metric._added_.action_sensitivity",
        "/metric/idm_accuracy@_global_.metric._added_.idm_accuracy"]  # the group's ids, sorted by name
    assert "/metric/revisit_error@_global_.metric._added_.revisit_error" in nodes["added_metrics/task/memory"].defaults
    assert list(nodes["added_metrics/protocol/open_loop"].defaults) == []
    cfg = compose(["task=controllability"])
    assert list(cfg.metric._added_) == ["action_sensitivity", "idm_accuracy"]
    assert "action_sensitivity" not in cfg.metric  # the chosen metrics (the benchmark's suite) stay apart
