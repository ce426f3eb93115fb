"""The run folder records the config that ran, every metric node included, and replay reads it back:
a metric's config file edited after the run does not change the replayed numbers."""

from __future__ import annotations

import json

import pytest
import yaml

from tests.conftest import run_cli, run_python
from wfeval.cli.replay import main as replay_main

MINE = "# @package metric.mse_mine\n_target_: wfeval.metrics.reference.MSE\ndata_range: 255.0\n"


@pytest.fixture(scope="module")
def run_with_extra_metrics(tmp_path_factory):
    """One CLI run (static model: non-zero errors) adding a metric of one's own (on the search path) and
    a built-in one with extra_metrics."""
    root = tmp_path_factory.mktemp("recorded")
    (root / "conf" / "metric").mkdir(parents=True)
    (root / "conf" / "metric" / "mse_mine.yaml").write_text(MINE)
    proc = run_cli([f"hydra.searchpath=[file://{root / 'conf'}]", "model=static", "metric=[psnr]",
                    "extra_metrics=[mse_mine,mae]", "benchmark.num_samples=4", "run.report=false",
                    "run.progress=off", f"hydra.run.dir={root / 'run'}", f"run.store_dir={root / 'store'}"], cwd=root)
    assert proc.returncode == 0, proc.stderr
    return root


def test_the_recorded_config_holds_every_metric_node_that_ran(run_with_extra_metrics):
    recorded = yaml.safe_load((run_with_extra_metrics / "run" / ".hydra" / "config.yaml").read_text())
    results = json.loads((run_with_extra_metrics / "run" / "results.json").read_text())
    assert list(recorded["metric"]) == ["psnr", "mse_mine", "mae"]
    assert {k.split(".", 1)[1] for k in results["metrics"]} == {"psnr", "mse_mine", "mae"}
    assert recorded["metric"]["mse_mine"] == {"_target_": "wfeval.metrics.reference.MSE", "data_range": 255.0}
    assert recorded["metric"]["mae"]["_target_"] == "wfeval.metrics.reference.MAE"


def test_replay_after_the_metric_files_changed_gives_the_recorded_numbers(run_with_extra_metrics, tmp_path, capsys):
    """The metric's file is edited after the run (another aggregation, another range): the replay reads
    what the run recorded, never the file of today, and equals the run's results.json byte for byte."""
    root = run_with_extra_metrics
    (root / "conf" / "metric" / "mse_mine.yaml").write_text(
        MINE.replace("255.0", "1.0") + "aggregation:\n  aggregator: median\n")
    original = json.loads((root / "run" / "results.json").read_text())
    assert original["results"]["gridworld.mse_mine"]["diagnostics"]["value"] > 0  # a number an edit could move
    assert replay_main([str(root / "run"), "--out", str(tmp_path / "replay"), "--check"]) == 0
    assert "matches the run's results.json" in capsys.readouterr().out
    assert (tmp_path / "replay" / "results.json").read_bytes() == (root / "run" / "results.json").read_bytes()


def test_replay_refuses_a_metric_the_folder_does_not_record(run_with_extra_metrics, tmp_path, capsys):
    """A run folder without a metric's node is refused by name: nothing is composed from today's files."""
    import shutil

    run = tmp_path / "run"
    shutil.copytree(run_with_extra_metrics / "run", run)
    config = run / ".hydra" / "config.yaml"
    recorded = yaml.safe_load(config.read_text())
    del recorded["metric"]["mae"]
    config.write_text(yaml.safe_dump(recorded))
    assert replay_main([str(run), "--out", str(tmp_path / "replay")]) == 2
    assert "metric 'mae': .hydra/config.yaml does not record its config" in capsys.readouterr().err


def test_resume_scores_with_the_recorded_metric_nodes_not_the_edited_files(run_with_extra_metrics, tmp_path):
    """A run folder resumed after its metric's file changed (other frames skipped, another aggregation)
    keeps the recorded node: the same rows, the same results."""
    import shutil

    from tests.conftest import cli_env

    root = run_with_extra_metrics
    (root / "conf" / "metric" / "mse_mine.yaml").write_text(
        MINE + "skip_frames: 3\naggregation:\n  aggregator: median\n")
    run = tmp_path / "run"
    shutil.copytree(root / "run", run)
    proc = run_python(["-m", "wfeval.resume", str(run)], cwd=root, env=cli_env(), timeout=300)
    assert proc.returncode == 0, proc.stderr
    before = json.loads((root / "run" / "results.json").read_text())
    after = json.loads((run / "results.json").read_text())
    assert after["results"] == before["results"] and after["config_hash"] == before["config_hash"]
    recorded = yaml.safe_load((run / ".hydra" / "config.yaml").read_text())
    assert recorded["metric"]["mse_mine"] == {"_target_": "wfeval.metrics.reference.MSE", "data_range": 255.0}
