"""The "Adding a metric" example of docs/metrics.md runs as written: config, pipeline and registry."""

from __future__ import annotations

import re
from importlib import metadata as importlib_metadata

import numpy as np
import pytest
from hydra import compose as hydra_compose
from hydra import initialize_config_module

from tests.conftest import ROOT
from wfeval.config import register_schemas
from wfeval.metrics import registry
from wfeval.pipeline.runner import run_from_config
from wfeval.storage.artifacts import ArtifactStore, read_array


def doc_files() -> dict[str, str]:
    """``<!-- example: path -->`` followed by a fenced block → {path: text}."""
    text = (ROOT / "docs" / "metrics.md").read_text()
    found = re.findall(r"<!-- example: (\S+) -->\n```\w*\n(.*?)```", text, flags=re.S)
    return dict(found)


def test_the_documented_metric_runs_in_the_pipeline_and_joins_the_registry(tmp_path, monkeypatch):
    files = doc_files()
    assert set(files) == {"my_metrics.py", "my_conf/metric/mean_brightness.yaml"}
    for path, text in files.items():
        (tmp_path / path).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / path).write_text(text)
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.setenv("WFEVAL_TRUST", "my_metrics.")  # the page's run.trust=[my_metrics.], in-process

    register_schemas()
    with initialize_config_module("wfeval.conf", version_base="1.3"):
        cfg = hydra_compose(config_name="config", overrides=[
            f"hydra.searchpath=[file://{tmp_path / 'my_conf'}]", "metric=[mean_brightness,psnr]",
            "benchmark.num_samples=3", f"run.store_dir={tmp_path / 'store'}", "run.progress=off"])
    summary = run_from_config(cfg, output_dir=tmp_path / "run")
    brightness = summary.results["gridworld.mean_brightness"]
    assert brightness.n_valid == 3 and summary.results["gridworld.psnr"].diagnostics["value"] == 100.0

    store = ArtifactStore(tmp_path / "store")
    videos = [read_array(r.references["video"], store=store) for r in _requests(cfg, store)]
    assert brightness.diagnostics["value"] == pytest.approx(np.mean([v.mean() / 255.0 for v in videos]), abs=1e-12)

    entry = importlib_metadata.EntryPoint(name="mean_brightness", value="my_metrics:MeanBrightness",
                                          group="wfeval.metrics")
    monkeypatch.setattr(importlib_metadata, "entry_points", lambda group=None: [entry])
    spec = registry.MetricRegistry().spec("brightness")
    assert (spec.id, spec.family, spec.metadata["reproducibility"]) == ("mean_brightness", "appearance", "deterministic")


def _requests(cfg, store):
    from wfeval.pipeline import build

    return build.build_benchmark(cfg).requests(store=store, task=build.build_task(cfg),
                                               protocol=build.build_protocol(cfg))
