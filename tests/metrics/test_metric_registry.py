"""One registry: every metric's spec by id or alias; plugins through the wfeval.metrics entry points."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata as importlib_metadata

import pytest
import yaml

from tests.conftest import ROOT, SUPPORT
from wfeval.api import Metric, MetricSpec
from wfeval.metrics import registry
from wfeval.metrics.basic import GeneratedRate
from wfeval.metrics.registry import REPRODUCIBILITY, MetricRegistry, UnknownMetricError, builtin_targets

BUILTINS = builtin_targets()

MINE = ["psnr", "ssim", "mse", "mae", "flicker", "motion_magnitude", "frame_repeat_rate", "action_following",
        "agent_position_error"]


@pytest.mark.parametrize("metric_id", sorted(BUILTINS))
def test_every_builtin_has_a_spec_with_its_id_version_unit_and_reproducibility_class(metric_id):
    spec = registry.get_spec(metric_id)
    assert isinstance(spec, MetricSpec) and spec.id == metric_id
    assert spec.version and spec.family and spec.output_unit
    assert spec.metadata["reproducibility"] in REPRODUCIBILITY
    assert spec.implementation == BUILTINS[metric_id]
    assert all(registry.get_spec(alias) == spec for alias in spec.aliases)


@pytest.mark.parametrize("metric_id", MINE)
def test_quality_temporal_and_control_specs_declare_everything(metric_id):
    spec = registry.get_spec(metric_id)
    assert spec.family in ("reference", "temporal", "control")
    assert spec.capability in ("core_video", "action_control")
    assert spec.required_artifacts == ("generated_video",)
    assert spec.requires_reference is (spec.family == "reference")
    assert spec.higher_is_better in (True, False, None) and spec.metadata["variant"]
    assert spec.aliases and registry.get_spec(spec.aliases[0]) == spec


def test_aliases_resolve_to_the_same_class_as_the_id():
    assert registry.get_metric_class("peak_signal_noise_ratio") is registry.get_metric_class("psnr")
    assert registry.get_spec("temporal_flickering").id == "flicker"
    assert registry.get_spec("action_accuracy").id == "action_following"


def test_base_metric_spec_still_works_and_the_registry_adds_aliases():
    assert GeneratedRate.spec().id == "generated_rate"
    assert registry.get_spec("fvd").aliases == ("frechet_video_distance",)


def test_an_unknown_metric_names_close_matches_and_everything_available():
    with pytest.raises(UnknownMetricError) as info:
        registry.get_spec("pnsr")
    message = str(info.value)
    assert message.startswith("Unknown metric 'pnsr'. Did you mean: psnr")
    assert "Available: action_following, action_sensitivity, agent_position_error, artifact_count, " in message


def test_create_builds_an_instance_with_config_keys():
    metric = registry.create_metric("psnr", max_db=80.0, skip_frames=1)
    assert isinstance(metric, Metric) and (metric.max_db, metric.skip_frames) == (80.0, 1)


def test_every_builtin_metric_config_targets_the_registered_class():
    for path in sorted((ROOT / "conf" / "metric").glob("*.yaml")):
        if path.stem.startswith("suite_"):
            continue
        target = yaml.safe_load(path.read_text())["_target_"]
        assert target == BUILTINS[path.stem], path.name


def _fake_entry_points(monkeypatch, *entries: tuple[str, str]):
    eps = [importlib_metadata.EntryPoint(name=n, value=v, group="wfeval.metrics") for n, v in entries]

    def entry_points(group=None):
        return [ep for ep in eps if ep.group == group]

    monkeypatch.setattr(importlib_metadata, "entry_points", entry_points)
    monkeypatch.syspath_prepend(str(SUPPORT))


def test_a_plugin_registers_through_the_entry_point_group(monkeypatch):
    _fake_entry_points(monkeypatch, ("frame-count", "wfeval_test_plugins:FrameCount"),
                       ("psnr", "wfeval_test_plugins:FrameCount"))
    reg = MetricRegistry()
    assert "frame-count" in reg.ids() and reg.ids().count("psnr") == 1
    assert reg.load("frame-count").__name__ == "FrameCount"
    assert reg.spec("frame_count").id == "frame_count"  # the class's own id, not the entry-point name
    assert reg.load("psnr").__module__ == "wfeval.metrics.reference"  # built-ins win
    assert reg.create("frame-count", raise_on=[1]).raise_on == {1}


@pytest.mark.subprocess  # an import-laziness probe
def test_the_registry_imports_nothing_until_asked():
    code = ("import sys; from wfeval.metrics import registry; registry.available_metrics();"
            "print(sorted(m for m in ('torch', 'wfeval.metrics.reference', 'wfeval.metrics.control') "
            "if m in sys.modules))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, timeout=120)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.strip() == "[]"

