"""The HTML report of a latent run (issue 49 item 2): no pixel-shaped error on a run whose outputs
are a probe readout or predicted latents, the probe curve over the horizon in numeric order with
chance and ceiling beside each score, and the goal image beside the path a planner took."""

from __future__ import annotations

import re

from tests.conftest import compose
from wfeval.pipeline.runner import run_from_config


def _run(tmp_path, name, *overrides):
    cfg = compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false",
                   "benchmark.num_samples=4", *overrides])
    run_from_config(cfg, output_dir=tmp_path / name)
    return tmp_path / name


def test_a_probing_report_has_the_horizon_curve_the_levels_and_no_pixel_error(tmp_path):
    from wfeval.report.html import write_report

    run = _run(tmp_path, "probing", "task=probing", "model=state_oracle", "protocol.train_episodes=4",
               "task.data.probing.num_frames=17")
    page = write_report([run], tmp_path / "r.html").read_text()
    assert "is not a T×H×W×3 video" not in page and 'class="problem"' not in page
    assert re.search(r'class="chart probe-curve" data-horizons="0,1,2,4,8,16"', page)
    levels = page[page.index('class="small probe-levels"'):]
    cells = re.findall(r"<tr><td>([a-z_0-9]+)</td><td>([^<]*)</td><td>([^<]*)</td><td>([^<]*)</td>", levels)[:7]
    assert [c[0] for c in cells] == ["probe_r2", *[f"imagined_probe_r2_k{k}" for k in (1, 2, 4, 8, 16)],
                                     "probe_accuracy"]  # by horizon in numeric order, then the others
    assert cells[0][1:] == ("1", "0", "1") and cells[-1][3] == "1" and 0 < float(cells[-1][2]) < 1
    assert "<td>agent_row</td>" in page


def test_a_latent_goal_reaching_report_shows_the_goal_beside_the_path_taken(tmp_path):
    from wfeval.report.html import write_report

    run = _run(tmp_path, "goals", "task=goal_reaching", "model=state_oracle", "protocol.planner.candidates=16")
    page = write_report([run], tmp_path / "r.html").read_text()
    assert "is not a T×H×W×3 video" not in page and 'class="problem"' not in page
    assert "<span>path taken (true world)</span><span>goal</span>" in page



def test_the_leaderboard_says_a_probes_chance_and_ceiling_and_flags_an_off_range_r2(tmp_path, monkeypatch):
    from wfeval.report.html import write_report

    monkeypatch.setenv("WFEVAL_TRUST", "tests.metrics.test_probe_levels.")  # in-process: trusted explicitly
    run = _run(tmp_path, "overshooting", "task=probing", "model=python",
               "model.object._target_=tests.metrics.test_probe_levels.Overshooting", "protocol.train_episodes=4",
               "task.data.probing.num_frames=9", "protocol.horizons=[1,4]")
    page = write_report([run], tmp_path / "r.html").read_text()
    board = page[:page.index('id="charts"')]
    assert "off range (&lt; -1)" in board or "off range (< -1)" in board
    assert re.search(r'title="chance 0, ceiling 1; effective rank [\d.]+ of 2;', board)
    assert re.search(r"⚠ the predictor leaves the encoder(&#39;|')s range", board)
