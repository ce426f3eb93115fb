"""One metric, several measurements: ``imagined_probe_r2`` with its horizons scores one measurement per
horizon under the ids the five probe classes had (``imagined_probe_r2_k1`` …), selected by its config
node or by a measurement id, recorded, rebuilt from a run folder (an older one too) and resumed."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import compose
from wfeval.api import GenerationRequest, GenerationResult
from wfeval.metrics.base import measurements_of
from wfeval.metrics.probing import ImaginedProbeR2, ProbeR2
from wfeval.metrics.rebuild import MetricRecordError, build_metric_from_record
from wfeval.metrics.registry import REGISTRY
from wfeval.pipeline import build
from wfeval.pipeline.metric_nodes import metric_nodes_with_rules
from wfeval.pipeline.stored import rebuild_results

IDS = [f"imagined_probe_r2_k{k}" for k in (1, 2, 4, 8, 16)]


def _result(imagined: dict) -> GenerationResult:
    scores = {str(k): {"x": {"kind": "continuous", "r2": r2}, "y": {"kind": "continuous", "r2": r2 / 2}}
              for k, r2 in imagined.items()}
    return GenerationResult(sample_id="s0", metadata={"probing": {"frames": 33, "observed": {}, "imagined": scores}})


def test_one_metric_serves_one_measurement_per_horizon_each_reading_its_own_horizon():
    metric = ImaginedProbeR2()
    measured = measurements_of("imagined_probe_r2", metric)
    assert list(measured) == IDS
    result = _result({1: 0.8, 2: 0.6, 4: 0.4, 8: 0.2, 16: 0.1})
    rows = {m: one.compute_sample(GenerationRequest(sample_id="s0"), result) for m, one in measured.items()}
    assert {m: r.raw_value for m, r in rows.items()} == pytest.approx(
        {"imagined_probe_r2_k1": 0.6, "imagined_probe_r2_k2": 0.45, "imagined_probe_r2_k4": 0.3,
         "imagined_probe_r2_k8": 0.15, "imagined_probe_r2_k16": 0.075})
    assert all(r.metric_id == m for m, r in rows.items())
    one = measured["imagined_probe_r2_k4"]
    assert isinstance(one, ImaginedProbeR2) and one.horizons == (4,) and one.display_name == "Probe R² (imagined, k=4)"
    assert (one.bounds, one.output_unit, one.version) == (ProbeR2.bounds, ProbeR2.output_unit, "1.0")
    single = ProbeR2()
    assert measurements_of("probe_r2", single) == {"probe_r2": single}  # a metric of one measurement: itself


def test_the_metric_of_several_horizons_is_not_scored_itself_and_its_horizons_are_checked():
    with pytest.raises(TypeError, match="one measurement per horizon"):
        ImaginedProbeR2().compute_sample(GenerationRequest(sample_id="s0"), _result({1: 0.5}))
    for bad in ([], [0, 1], [2, 2]):
        with pytest.raises(ValueError, match="distinct positive step counts"):
            ImaginedProbeR2(horizons=bad)
    skipped = ImaginedProbeR2(horizons=[3]).compute_sample(GenerationRequest(sample_id="s0"), _result({1: 0.5}))
    assert skipped.status == "skip" and skipped.skip_reason == "k=3 is not among protocol.horizons"


def test_the_registry_resolves_a_measurement_id_to_its_metric_and_the_options_that_select_it():
    assert REGISTRY.measurement("imagined_probe_r2_k4") == ("imagined_probe_r2", {"horizons": [4]})
    assert REGISTRY.measurement("probe_r2") is None and REGISTRY.measurement("imagined_probe_r2") is None


def test_task_probing_selects_the_metric_and_the_run_scores_its_measurements():
    nodes, rules = metric_nodes_with_rules(compose(["task=probing"]))
    assert list(nodes) == ["imagined_probe_r2", "probe_accuracy", "probe_f1", "probe_r2"] and rules["imagined_probe_r2"] == "protocol"
    metrics = build.build_metrics(nodes)
    assert list(metrics) == [*IDS, "probe_accuracy", "probe_f1", "probe_r2"]
    assert metrics.node_of["imagined_probe_r2_k16"] == "imagined_probe_r2" and metrics.node_of["probe_r2"] == "probe_r2"


def test_extra_metrics_names_one_measurement_and_a_measurement_two_nodes_give_is_scored_once():
    nodes, rules = metric_nodes_with_rules(compose(["extra_metrics=[imagined_probe_r2_k2]"]))
    assert rules["imagined_probe_r2_k2"] == "extra_metrics" and list(nodes["imagined_probe_r2_k2"].horizons) == [2]
    assert "imagined_probe_r2" not in nodes
    assert list(build.build_metrics({"imagined_probe_r2_k2": nodes["imagined_probe_r2_k2"]})) == ["imagined_probe_r2_k2"]
    nodes, _ = metric_nodes_with_rules(compose(["task=probing", "extra_metrics=[imagined_probe_r2_k2]"]))
    metrics = build.build_metrics(nodes)
    assert list(metrics).count("imagined_probe_r2_k2") == 1 and metrics.node_of["imagined_probe_r2_k2"] == "imagined_probe_r2"


def test_a_run_folder_recorded_before_the_probes_were_one_metric_is_rebuilt_from_the_measurement_ids():
    old = build_metric_from_record("imagined_probe_r2_k8", {"_target_": "wfeval.metrics.probing.ImaginedProbeR2K8",
                                                            "confidence": 0.9},
                                   target="wfeval.metrics.probing.ImaginedProbeR2K8")
    assert isinstance(old, ImaginedProbeR2) and (old.name, old.horizons, old.confidence) == ("imagined_probe_r2_k8", (8,), 0.9)
    with pytest.raises(MetricRecordError, match="is not a registered metric"):  # another module's class: not ours
        build_metric_from_record("imagined_probe_r2_k8", {"_target_": "evil.ImaginedProbeR2K8"}, target="evil.ImaginedProbeR2K8")


@pytest.fixture(scope="module")
def probing_run(tmp_path_factory):
    """One command's run: a folder that replay, merge and resume read."""
    from tests.conftest import run_cli

    tmp_path = tmp_path_factory.mktemp("measurements")
    proc = run_cli([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false", "task=probing",
                    "model=state_oracle", "model.predictor=static", "benchmark.num_samples=4",
                    "protocol.train_episodes=4", "task.data.probing.num_frames=9", "protocol.horizons=[1,4]",
                    "metric=[imagined_probe_r2,probe_accuracy,probe_r2]", "metric.imagined_probe_r2.horizons=[1,4]",
                    f"hydra.run.dir={tmp_path / 'run'}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return tmp_path / "run"


def test_a_run_records_each_measurement_with_its_node_and_its_folder_rebuilds_old_and_new(probing_run, tmp_path):
    import shutil

    run = tmp_path / "run"
    shutil.copytree(probing_run, run)
    document = json.loads((run / "results.json").read_text())
    assert list(document["results"]) == ["gridworld.imagined_probe_r2_k1", "gridworld.imagined_probe_r2_k4",
                                         "gridworld.probe_accuracy", "gridworld.probe_r2"]
    assert document["metric_selection"] == {"imagined_probe_r2_k1": "metric", "imagined_probe_r2_k4": "metric",
                                            "probe_accuracy": "metric", "probe_r2": "metric"}
    k1, k4 = (document["results"][f"gridworld.imagined_probe_r2_k{k}"]["normalized_stats"]["mean"] for k in (1, 4))
    assert k4 < k1 < 1.0  # the static predictor loses the state the further it imagines
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["metrics"]["imagined_probe_r2_k4"]["node"] == "imagined_probe_r2"
    assert "node" not in manifest["metrics"]["probe_r2"]
    assert rebuild_results(run)[3].to_dict()["results"] == document["results"]

    # the same folder as the five classes wrote it: one node and one class per measurement
    config_file = run / ".hydra" / "config.yaml"
    config = yaml.safe_load(config_file.read_text())
    node = config["metric"].pop("imagined_probe_r2")
    for k in (1, 4):
        config["metric"][f"imagined_probe_r2_k{k}"] = {**{key: v for key, v in node.items() if key != "horizons"},
                                                       "_target_": f"wfeval.metrics.probing.ImaginedProbeR2K{k}"}
        entry = manifest["metrics"][f"imagined_probe_r2_k{k}"]
        entry.pop("node")
        entry["class"] = f"wfeval.metrics.probing.ImaginedProbeR2K{k}"
    config_file.write_text(yaml.safe_dump(config))
    (run / "manifest.json").write_text(json.dumps(manifest))
    assert rebuild_results(run)[3].to_dict()["results"] == document["results"]


def test_metric_and_extra_metrics_still_take_the_former_ids_and_score_the_same_numbers(tmp_path):
    """``metrics=[probe_r2, imagined_probe_r2_k1]`` (a command's ``metric=``) and ``extra_metrics`` name
    measurements as before; each is the metric with that horizon alone, and its value is the one the
    metric of every horizon gives."""
    import wfeval
    from tests.models.test_latent_models import CellEncoder

    common = [f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "benchmark.num_samples=2",
              "protocol.train_episodes=3", "task.data.probing.num_frames=6", "protocol.horizons=[1,4]"]
    by_id = wfeval.evaluate(CellEncoder(), "gridworld", ["probe_r2", "imagined_probe_r2_k1"], task="probing",
                            model_version="v1", overrides=[*common, "extra_metrics=[imagined_probe_r2_k4]"],
                            run_dir=tmp_path / "by_id")
    whole = wfeval.evaluate(CellEncoder(), "gridworld", task="probing", model_version="v1", overrides=common,
                            run_dir=tmp_path / "whole")
    assert sorted(by_id) == ["gridworld.imagined_probe_r2_k1", "gridworld.imagined_probe_r2_k4", "gridworld.probe_r2"]
    for key in by_id:
        assert by_id[key].value == whole[key].value
    selection = json.loads((tmp_path / "by_id" / "results.json").read_text())["metric_selection"]
    assert selection == {"probe_r2": "metric", "imagined_probe_r2_k1": "metric", "imagined_probe_r2_k4": "extra_metrics"}


def test_a_resumed_run_keeps_every_measurements_rows_and_results(probing_run, tmp_path):
    import shutil

    from tests.conftest import cli_env, run_python

    run = tmp_path / "run"
    shutil.copytree(probing_run, run)
    (run / "results.json").unlink()
    proc = run_python(["-m", "wfeval.resume", str(run)], cwd=tmp_path, env=cli_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    before = json.loads((probing_run / "results.json").read_text())
    after = json.loads((run / "results.json").read_text())
    assert after["results"] == before["results"] and after["metric_selection"] == before["metric_selection"]
    events = [json.loads(line) for line in (run / "events.jsonl").read_text().splitlines()]
    score = [e for e in events if e.get("event") == "phase_started" and e.get("phase") == "score"][-1]
    assert score["reused"] == 4 * 4  # 4 samples x (k1, k4, probe_accuracy, probe_r2): nothing scored again
