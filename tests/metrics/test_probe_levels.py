"""What a probe score is read against, wherever it is shown: chance and ceiling beside accuracy as
beside R², the latents' effective rank (a collapsed encoder reads 1), the mean per variable, and an
imagined R² far below −1 flagged as the predictor leaving the encoder's range, not printed as a
number to compare (issue 49 items 3 and 6)."""

from __future__ import annotations

import numpy as np
import pytest

from tests.conftest import compose
from tests.models.test_latent_models import CellEncoder
from wfeval.pipeline.runner import run_from_config
from wfeval.report.markdown import results_markdown
from wfeval.report.probes import OFF_RANGE, horizon_order
from wfeval.report.table import results_table
from wfeval.results.record import read_results
from wfeval.trackers.record import measurement_values


class Collapsed(CellEncoder):
    """Every frame encoded alike: the collapse the effective rank is there to catch."""

    name = "collapsed"

    def encode(self, frames):
        return np.ones((len(frames), 16))

    def predict(self, z, actions):
        return np.repeat(np.asarray(z)[:, None, :], np.asarray(actions).shape[1], axis=1)


class Overshooting(CellEncoder):
    """The cell encoder whose predictor throws its latents far off the encoder's scale."""

    name = "overshooting"

    def predict(self, z, actions):
        return super().predict(z, actions) * 1000.0


def _run(tmp_path, model):
    target = f"tests.metrics.test_probe_levels.{model}"
    cfg = compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false", "task=probing",
                   "model=python", f"model.object._target_={target}", "benchmark.num_samples=4",
                   "protocol.train_episodes=4", "task.data.probing.num_frames=9", "protocol.horizons=[1,4]"])
    summary = run_from_config(cfg, output_dir=tmp_path / model)
    return read_results(tmp_path / model), summary.results


@pytest.fixture(scope="module")
def runs(tmp_path_factory):
    import os

    root = tmp_path_factory.mktemp("levels")
    os.environ["WFEVAL_TRUST"] = "tests.metrics.test_probe_levels."  # in-process: trusted explicitly
    try:
        return {m: _run(root, m) for m in ("CellEncoder", "Collapsed", "Overshooting")}
    finally:
        del os.environ["WFEVAL_TRUST"]


def test_every_probe_score_carries_its_chance_ceiling_and_mean_per_variable(runs):
    document, aggregates = runs["CellEncoder"]
    results = document.results
    r2, acc = results["gridworld.probe_r2"].diagnostics, results["gridworld.probe_accuracy"].diagnostics
    assert (r2["chance"], r2["ceiling"]) == (0.0, 1.0)
    assert 0.0 < acc["chance"] < 1.0 and acc["ceiling"] == 1.0  # the training majority's share
    assert r2["variables"]["agent_row"] == pytest.approx(1.0, abs=1e-6) and r2["variables"]["object_row"] < 0.9
    assert set(acc["variables"]) == {"object_drow", "object_dcol"}
    table = results_table(aggregates)
    line = next(t for t in table.splitlines() if t.startswith("gridworld.probe_accuracy"))
    assert f"chance {acc['chance']:.4g}, ceiling 1" in line
    values = measurement_values(document)  # what trackers log
    assert values["gridworld.probe_accuracy/chance"] == acc["chance"]
    assert values["gridworld.probe_r2/ceiling"] == 1.0
    assert values["gridworld.probe_r2/variable/agent_row"] == pytest.approx(1.0, abs=1e-6)
    md = results_markdown(document)
    assert "## Probes" in md and "| gridworld.probe_accuracy |" in md and "| agent_row |" in md


def test_a_collapsed_encoder_has_an_effective_rank_of_one_and_a_seeing_one_more(runs):
    collapsed = runs["Collapsed"][0].results["gridworld.probe_r2"].diagnostics
    seeing = runs["CellEncoder"][0].results["gridworld.probe_r2"].diagnostics
    assert collapsed["effective_rank"] == pytest.approx(1.0, rel=1e-4) and collapsed["latent_dim"] == 16
    assert 1.5 < seeing["effective_rank"] <= 2.0 and seeing["latent_dim"] == 2  # two cell coordinates
    assert "effective rank 1 of 16" in results_table(runs["Collapsed"][1])


def test_an_imagined_r2_far_below_minus_one_is_flagged_not_shown_as_a_number(runs):
    document, aggregates = runs["Overshooting"]
    results = document.results
    imagined = results["gridworld.imagined_probe_r2_k1"]
    assert imagined.value < -1 and imagined.diagnostics["off_range"] is True
    assert "off_range" not in results["gridworld.probe_r2"].diagnostics  # observed latents are the encoder's own
    assert "off_range" not in runs["CellEncoder"][0].results["gridworld.imagined_probe_r2_k1"].diagnostics
    line = next(t for t in results_table(aggregates).splitlines() if t.startswith("gridworld.imagined_probe_r2_k1"))
    assert OFF_RANGE in line and "leaves the encoder's range" in line and f"{imagined.value:.4g}" not in line
    assert measurement_values(document)["gridworld.imagined_probe_r2_k1/off_range"] == 1.0
    assert "the predictor leaves the encoder" in results_markdown(document)


def test_horizons_are_ordered_by_number_not_by_text():
    ids = [f"b.imagined_probe_r2_k{k}" for k in (16, 2, 1, 8, 4)] + ["b.probe_r2", "b.psnr"]
    assert horizon_order(ids) == ["b.probe_r2", *[f"b.imagined_probe_r2_k{k}" for k in (1, 2, 4, 8, 16)]]
