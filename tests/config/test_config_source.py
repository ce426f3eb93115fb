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
                                        "action_following", "agent_position_error")}


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


# --- wfeval's own config files, parsed once a process (wfeval-files://) ---------------------------

def _files_source():
    from hydra_plugins.wfeval_configs import WfevalFilesSource

    return WfevalFilesSource(provider="wfeval", path="wfeval-files://wfeval.conf")


def _every_config_file(source, group=""):
    for name in source.list(group, None):
        path = f"{group}/{name}".lstrip("/")
        if source.is_group(path):
            yield from _every_config_file(source, path)
        if source.is_config(path):
            yield path


def test_every_wfeval_config_file_loads_as_hydras_package_source_loads_it():
    """The reference is Hydra's own ``pkg://`` source over the same package: the same node, types and
    header for every file, the same listing of every group."""
    from hydra._internal.core_plugins.importlib_resources_config_source import ImportlibResourcesConfigSource

    ours, hydras = _files_source(), ImportlibResourcesConfigSource(provider="main", path="pkg://wfeval.conf")
    files = sorted(_every_config_file(ours))
    assert files == sorted(_every_config_file(hydras)) and len(files) >= 80 and "config" in files
    for path in files:
        for _ in range(2):  # parsed, then served from the cache
            mine, reference = ours.load_config(path), hydras.load_config(path)
            assert OmegaConf.to_yaml(mine.config) == OmegaConf.to_yaml(reference.config), path
            assert _shape(mine.config) == _shape(reference.config), path
            assert mine.header == reference.header, path
    for group in ("", "metric", "benchmark", "model"):
        assert ours.list(group, None) == hydras.list(group, None), group
    assert ours.path == "wfeval.conf" and ours.available() and not ours.is_config("metric/no_such_metric")
    from wfeval.config import files as config_files

    assert config_files.warm() == len(files)  # what a forking server parses once


def test_a_file_is_parsed_once_for_its_text_and_again_when_its_text_changes(monkeypatch):
    from wfeval.config import files as source

    parses = []
    real_load = OmegaConf.load
    monkeypatch.setattr(OmegaConf, "load", lambda stream: parses.append(1) or real_load(stream))
    monkeypatch.setattr(source, "_PARSED", {})
    first = source.parsed("pkg.conf", "model/x.yaml", "a: 1\nb: [1, 2]\n")
    first.b.append(3)  # a copy: the next load does not see it
    second = source.parsed("pkg.conf", "model/x.yaml", "a: 1\nb: [1, 2]\n")
    assert len(parses) == 1 and OmegaConf.to_container(second) == {"a": 1, "b": [1, 2]}
    edited = source.parsed("pkg.conf", "model/x.yaml", "a: 2\n")
    assert len(parses) == 2 and OmegaConf.to_container(edited) == {"a": 2}


def test_the_files_source_stands_just_before_wfevals_package_on_the_search_path():
    cfg = compose(hydra=True)
    sources = [(s.provider, f"{s.schema}://{s.path}") for s in cfg.hydra.runtime.config_sources]
    main = sources.index(("main", "pkg://wfeval.conf"))
    assert sources[main - 1] == ("wfeval", "wfeval-files://wfeval.conf")
    assert sum(path.startswith("wfeval-files://") for _, path in sources) == 1



def test_the_parsed_files_outlive_hydras_plugin_scan_which_runs_the_plugin_module_again(monkeypatch):
    """Hydra's plugin scan executes every ``hydra_plugins`` module again (``exec_module`` into the module
    already imported): a cache kept there would be emptied in every process after a server warmed it."""
    import importlib
    import io

    import hydra_plugins.wfeval_configs as plugin
    from wfeval.config import files as config_files

    config_files.warm()
    before = dict(config_files._PARSED)
    spec = importlib.util.find_spec("hydra_plugins.wfeval_configs")
    spec.loader.exec_module(plugin)  # what Hydra's scan does
    assert config_files._PARSED == before and len(before) >= 80
    ours = []  # wfeval's files reach OmegaConf.load as text (Hydra's own hydra/*.yaml as open files)
    real_load = OmegaConf.load
    monkeypatch.setattr(OmegaConf, "load", lambda stream: ours.append(isinstance(stream, io.StringIO))
                        or real_load(stream))
    compose(hydra=True)
    assert ours and not any(ours)  # Hydra loaded its own files; none of wfeval's was parsed again
