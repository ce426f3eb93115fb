"""The results API per variable and per horizon (issue 50, item 7): what researchers pulled out of
metrics.jsonl by hand. Checked against the headline values they must average to."""

from __future__ import annotations

import json

import pytest

from tests.conftest import compose
from wfeval.pipeline.runner import run_from_config
from wfeval.results.measurements import Results
from wfeval.results.record import read_results


def _run(tmp_path, *overrides):
    run_from_config(compose([*overrides, "run.progress=off", "run.report=false",
                             f"run.store_dir={tmp_path / 'store'}"]), output_dir=tmp_path / "run")
    return Results(read_results(tmp_path / "run" / "results.json"), tmp_path / "run")


def test_probing_per_variable_and_per_horizon_average_to_the_headlines(tmp_path):
    results = _run(tmp_path, "task=probing", "model=random_projection", "benchmark.num_samples=8")
    variables = results.per_variable("gridworld.probe_r2")
    assert sorted(variables) == ["agent_col", "agent_row", "object_col", "object_row"]
    # every sample scores every variable: the mean over variables of their means is the headline
    assert sum(variables.values()) / len(variables) == pytest.approx(results["gridworld.probe_r2"].value, abs=1e-12)
    rows = [json.loads(line) for line in (results.run_dir / "metrics.jsonl").read_text().splitlines()]
    agent_row = [r["components"]["agent_row"] for r in rows if r["metric_id"] == "probe_r2"]
    assert variables["agent_row"] == pytest.approx(sum(agent_row) / len(agent_row), abs=1e-12)
    accuracy = results.per_variable("gridworld.probe_accuracy")
    assert accuracy and "chance" not in accuracy  # the chance level is not a variable

    horizons = results.per_horizon("gridworld.imagined_probe_r2")
    assert list(horizons) == [1, 2, 4, 8, 16]
    assert horizons == {k: results[f"gridworld.imagined_probe_r2_k{k}"].value for k in horizons}
    with pytest.raises(KeyError, match="not a measurement of this run"):
        results.per_variable("gridworld.psnr")


def test_a_curve_per_frame_averages_to_the_headline_over_frames(tmp_path):
    results = _run(tmp_path, "model=noisy", "benchmark.num_samples=4", "metric=[psnr,generated_rate]")
    curve = results.per_horizon("gridworld.psnr")
    assert list(curve) == list(range(1, 16))  # frames 1..15 (frame 0 is the given one)
    # PSNR averages over frames per sample, then over samples: the curve's mean is the headline
    assert sum(curve.values()) / len(curve) == pytest.approx(results["gridworld.psnr"].value, rel=1e-12)
    assert results.per_horizon("gridworld.generated_rate") == {}  # no curve kept
    assert results.per_variable("gridworld.psnr") == {}  # no per-variable scores (a curve is not a variable)
