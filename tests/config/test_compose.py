"""The config tree composes, validates at compose time and instantiates every built-in option."""

from __future__ import annotations

import pytest
from hydra.errors import ConfigCompositionException
from omegaconf import OmegaConf
from omegaconf.errors import OmegaConfBaseException, ValidationError

from tests.conftest import ROOT, compose, require_maze
from wfeval.api import EvaluationProtocolSpec, Metric, WorldTaskConfig
from wfeval.config.errors import group_options
from wfeval.pipeline import build
from wfeval.pipeline.metric_nodes import metric_nodes, metric_nodes_with_rules
from wfeval.pipeline.select import check_requests_fit_task
from wfeval.storage.artifacts import ArtifactStore


def test_default_config_selects_the_benchmark_metric_suite():
    cfg = compose()
    assert cfg.task.name == "action_video"
    assert cfg.benchmark.name == "gridworld"
    assert cfg.model.name == "oracle"
    assert cfg.protocol.name == "open_loop"
    assert list(cfg.metric) == ["generated_rate", "artifact_count", "psnr", "ssim", "flicker", "action_following",
                                "agent_position_error", "dynamic_psnr", "dynamic_ssim", "break_even_horizon"]
    assert [m.split("==")[0] for m in cfg.benchmark.metrics] == list(cfg.metric)  # psnr==1.0: a pinned version


def test_a_benchmark_of_ones_own_lists_its_metrics_once(tmp_path):
    """No suite file: the metrics its file lists are selected, each from its own config file."""
    (tmp_path / "benchmark").mkdir()
    (tmp_path / "benchmark" / "mine.yaml").write_text("defaults: [gridworld, _self_]\nname: mine\n"
                                                      "metrics: [psnr==1.0, mse]\n")
    cfg = compose(["benchmark=mine", f"hydra.searchpath=[file://{tmp_path}]"])
    assert dict(cfg.metric) == {}  # no suite_mine: nothing composed yet
    nodes, rules = metric_nodes_with_rules(cfg)
    assert list(nodes) == ["psnr", "mse"] and rules == {"psnr": "benchmark", "mse": "benchmark"}
    assert nodes["psnr"]._target_ == "wfeval.metrics.reference.PSNR"
    assert build.benchmark_rules(cfg)["evidence"]["metric_versions"] == {"psnr": "1.0"}


def test_metric_list_override_selects_each_metric_under_its_own_id():
    cfg = compose(["metric=[fvd,artifact_count]"])
    assert list(cfg.metric) == ["fvd", "artifact_count"]
    assert cfg.metric.fvd._target_ == "wfeval.metrics.fvd.FVD"
    assert cfg.metric.fvd.clip_length == 16


def test_a_typo_in_a_key_fails_at_compose_time_naming_the_full_key():
    with pytest.raises(ConfigCompositionException) as info:
        compose(["benchmark.num_sample=3"])
    assert isinstance(info.value.__cause__, OmegaConfBaseException)
    assert info.value.__cause__.full_key == "benchmark.num_sample"


def test_a_wrong_type_fails_at_compose_time_naming_the_full_key():
    with pytest.raises(ConfigCompositionException) as info:
        compose(["metric=[fvd]", "metric.fvd.clip_length=sixteen"])
    assert isinstance(info.value.__cause__, ValidationError)
    assert info.value.__cause__.full_key == "metric.fvd.clip_length"


def test_task_and_protocol_schema_reject_unknown_keys():
    with pytest.raises(ConfigCompositionException):
        compose(["task.inputs_keys=[image]"])
    with pytest.raises(ConfigCompositionException):
        compose(["protocol.contxt_frames=2"])


def test_protocol_config_gives_the_spec_the_core_reads_and_the_class_with_its_own_options():
    cfg = compose(["protocol=autoregressive", "protocol.chunk=3"])
    spec, protocol = build.build_protocol(cfg), build.build_protocol_class(cfg)
    assert isinstance(spec, EvaluationProtocolSpec)
    assert (spec.name, spec.metric_groups, spec.metadata["context_frames"]) == ("autoregressive", ("interactive",), 1)
    assert type(protocol).__name__ == "Autoregressive" and protocol.chunk == 3
    assert "chunk" not in spec.metadata  # the protocol's own option, not the spec's


def test_task_config_is_a_world_task_config():
    task = build.build_task(compose())
    assert isinstance(task, WorldTaskConfig)
    assert task.task_id == "action_video"
    assert task.input_keys == ("image", "actions")
    assert task.output_keys == ("generated_video",)


# options that adapt the user's own model or data need to be told where it is
REQUIRED = {
    "precomputed": [f"model.root={ROOT / 'examples'}"],
    "command": ["model.argv=[python,examples/command_model/model.py]"],
    "python": ["model.object._target_=wfeval.benchmarks.gridworld.baselines.StaticModel", "model.name=python"],
    "folder": [f"benchmark.dataset_root={ROOT / 'examples' / 'datasets' / 'gridworld_tiny'}",
               "benchmark.name=folder"],
    "lerobot": [f"benchmark.dataset_root={ROOT / 'examples' / 'datasets' / 'square_lerobot'}", "benchmark.name=lerobot"],
    "hdf5": [f"benchmark.dataset_root={ROOT / 'examples' / 'datasets' / 'square.hdf5'}", "benchmark.name=hdf5",
             "benchmark.fps=10"],
    "video_actions": [f"benchmark.dataset_root={ROOT / 'examples' / 'datasets' / 'square_episodes'}",
                      "benchmark.name=video_actions"],
    "minari": [f"benchmark.dataset_root={ROOT / 'examples' / 'datasets' / 'square_minari'}", "benchmark.name=minari",
               "benchmark.fps=10"],
}


# model=learned serves a checkpoint trained by python -m wfeval.recipes.train (tests/recipes train one)
NEEDS_TRAINING = ("learned",)


def test_the_learned_model_without_a_trained_checkpoint_says_how_to_train_one(tmp_path):
    with pytest.raises(build.ConfigError, match=r"model.checkpoint: no weights file .*model.pt; "
                                                r"train one with: python -m wfeval.recipes.train"):
        build.build_model(compose(["model=learned", f"model.checkpoint={tmp_path / 'model.pt'}"]))


@pytest.mark.parametrize("name", [m for m in group_options("model") if m not in NEEDS_TRAINING])
def test_every_builtin_model_instantiates_from_its_target(name):
    model = build.build_model(compose([f"model={name}", *REQUIRED.get(name, [])]))
    widths = {"random_projection": "random_projection_dim64", "pixels_pca": "pixels_pca_dim64"}  # width named
    assert model.name == widths.get(name, name)
    assert callable(model.generate)


METRICS = [m for m in group_options("metric") if not m.startswith("suite_")]


@pytest.fixture(scope="module")
def every_metric_node():
    """Every built-in metric's node from one composition of them all: each option composes under its own
    id, as ``metric=[<name>]`` composes it alone (one composition instead of one per metric)."""
    nodes = metric_nodes(compose([f"metric=[{','.join(METRICS)}]"]))
    assert list(nodes) == METRICS
    return nodes


@pytest.mark.parametrize("name", METRICS)
def test_every_builtin_metric_instantiates_and_satisfies_the_protocol(name, every_metric_node):
    metrics = build.build_metrics({name: every_metric_node[name]})
    several = {"imagined_probe_r2": [f"imagined_probe_r2_k{k}" for k in (1, 2, 4, 8, 16)]}  # one per horizon
    assert list(metrics) == several.get(name, [name]) and set(metrics.node_of.values()) == {name}
    for measurement, metric in metrics.items():
        assert isinstance(metric, Metric)
        assert metric.name == measurement


@pytest.mark.parametrize("name", group_options("benchmark"))
def test_every_builtin_benchmark_instantiates_and_has_a_metric_suite(name):
    game_package = "ale_py" if name.startswith("atari") else "crafter" if name == "crafter" else None
    if game_package:  # the games extra (wfeval[games]); its absence is tested in test_atari_config
        pytest.importorskip(game_package)
    if name.startswith("memory_maze"):  # wfeval[maze3d] and Mesa's EGL (a failure under CI=true)
        require_maze()
    cfg = compose([f"benchmark={name}", *REQUIRED.get(name, [])])
    bench = build.build_benchmark(cfg)
    assert bench.spec.benchmark_id == name
    assert [m.id for m in bench.spec.metrics] == list(cfg.metric)


def test_extra_metrics_add_to_the_selected_metrics():
    nodes = metric_nodes(compose(["extra_metrics=[fvd]"]))
    assert list(nodes) == ["generated_rate", "artifact_count", "psnr", "ssim", "flicker", "action_following",
                          "agent_position_error", "dynamic_psnr", "dynamic_ssim", "break_even_horizon", "fvd"]


def test_unknown_extra_metric_is_a_config_error_with_a_suggestion():
    with pytest.raises(build.ConfigError, match="Unknown metric 'fvdd'. Did you mean: fvd?"):
        metric_nodes(compose(["extra_metrics=[fvdd]"]))


def test_user_config_folder_on_the_searchpath_adds_options():
    cfg = compose(["model=flaky_oracle", "metric=[frame_count,generated_rate]"], searchpath=True)
    assert cfg.model._target_ == "wfeval_test_plugins.FlakyOracle"
    assert list(cfg.metric) == ["frame_count", "generated_rate"]


def test_job_config_resolves_without_missing_values():
    cfg = compose()
    OmegaConf.resolve(cfg)
    assert OmegaConf.missing_keys(cfg) == set()


def test_generated_rate_checks_the_outputs_the_task_declares():
    cfg = compose(["task.output_keys=[generated_video,depth]"])
    metric = build.build_metrics(metric_nodes(cfg))["generated_rate"]
    assert metric.output_keys == ("generated_video", "depth")


def test_a_protocol_class_that_is_not_a_protocol_is_a_config_error():
    with pytest.raises(build.ConfigError, match="protocol: ArtifactStore is not a protocol: it lacks identity, record"):
        build.build_protocol_class(compose(["protocol._target_=wfeval.storage.artifacts.ArtifactStore",
                                            "+protocol.root=/tmp"]))


def test_a_protocol_option_of_another_protocol_fails_at_compose_time():
    with pytest.raises(ConfigCompositionException) as info:
        compose(["protocol.chunk=2"])  # open_loop has no chunk
    assert info.value.__cause__.full_key == "protocol.chunk"


def test_a_task_needing_inputs_the_benchmark_lacks_is_refused_before_generation(tmp_path):
    cfg = compose(["task.input_keys=[image,actions,depth]", f"run.store_dir={tmp_path}"])
    bench = build.build_benchmark(cfg)
    requests = bench.requests(store=ArtifactStore(tmp_path), task=build.build_task(cfg),
                              protocol=build.build_protocol(cfg))
    with pytest.raises(build.ConfigError, match="provides no 'depth'"):
        check_requests_fit_task(requests, build.build_task(cfg))


def test_a_metric_aggregation_can_be_chosen_in_the_config_and_is_checked_early():
    metrics = build.build_metrics(metric_nodes(compose([
        "metric=[psnr]", "metric.psnr.aggregation={aggregator:median,statistics:[median,p5,p95],ci:bootstrap}"])))
    psnr = metrics.aggregation["psnr"]
    assert (psnr.aggregator, psnr.statistics, psnr.ci) == ("median", ("median", "p5", "p95"), "bootstrap")
    with pytest.raises(build.ConfigError, match="metric.psnr.aggregation: .*'medain'"):
        build.build_metrics(metric_nodes(compose(["metric=[psnr]",
                                                        "metric.psnr.aggregation.aggregator=medain"])))
    with pytest.raises(build.ConfigError, match="fvd.aggregation: FVD aggregates with its own method"):
        build.build_metrics(metric_nodes(compose(["metric=[fvd]", "metric.fvd.aggregation.ci=normal"])))


def test_extra_metrics_resolve_registry_aliases_and_entry_point_metrics(monkeypatch):
    from wfeval.metrics import registry

    nodes = metric_nodes(compose(["extra_metrics=[peak_signal_noise_ratio]"]))
    assert "psnr" in nodes and nodes["psnr"]["_target_"] == "wfeval.metrics.reference.PSNR"

    class FakeEntryPoint:
        name = "frame_count"

        def load(self):
            import wfeval_test_plugins

            return wfeval_test_plugins.FrameCount

    monkeypatch.setattr(registry.REGISTRY, "_entry_points", {"frame_count": FakeEntryPoint()})
    nodes = metric_nodes(compose(["extra_metrics=[frame_count]"]))
    assert nodes["frame_count"] == {"_target_": "wfeval_test_plugins.FrameCount"}
    metrics = build.build_metrics(nodes)
    assert metrics["frame_count"].name == "frame_count"
