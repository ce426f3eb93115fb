"""A malformed YAML names its file and line, without a traceback (exit 2), wherever it is read
(search path, extra_metrics, a run folder); extra_metrics and metric= find the same metrics."""

from __future__ import annotations

import json

import pytest

from tests.conftest import SUPPORT_CONF, only_run_dir
from tests.robustness._trust_support import assert_refused, cli, write


@pytest.mark.parametrize("text, line, problem", [
    ("name: bad\nfoo: [1, 2\n  bar: : x\n", "line 3, column 6", "expected ',' or ']'"),
    ("name: bad\nfoo:\n\t- 1\n", "line 3, column 1", "found character '\\t'"),
    ("name: bad\nname: again\n", "line 2, column 1", "found duplicate key name"),
    ("name: 'unterminated\n", "line 2", "found unexpected end of stream"),
], ids=["flow-sequence", "tab", "duplicate-key", "unterminated-quote"])
def test_a_malformed_benchmark_yaml_names_file_and_line(tmp_path, text, line, problem):
    bad = write(tmp_path / "conf", "benchmark/bad.yaml", text)
    proc = cli(tmp_path, f"hydra.searchpath=[file://{tmp_path / 'conf'}]", "benchmark=bad", "metric=[generated_rate]")
    assert_refused(proc, f"malformed YAML in {bad}, {line}", problem)
    assert len(proc.stderr.strip().splitlines()) == 1  # one paragraph, not a parser dump


def test_a_malformed_metric_reached_through_extra_metrics_names_file_and_line(tmp_path):
    bad = write(tmp_path / "conf", "metric/broken.yaml", "# @package metric.broken\n_target_: [unclosed\n")
    proc = cli(tmp_path, f"hydra.searchpath=[file://{tmp_path / 'conf'}]", "metric=[generated_rate]",
               "extra_metrics=[broken]", "run.limit=1")
    assert_refused(proc, "extra_metrics: malformed YAML in", str(bad), "line 3")


def _fake_run(run_dir, config_text):
    (run_dir / ".hydra").mkdir(parents=True)
    (run_dir / "manifest.json").write_text(json.dumps({"metrics": {}}))
    (run_dir / "metrics.jsonl").write_text("")
    (run_dir / ".hydra" / "config.yaml").write_text(config_text)
    (run_dir / ".hydra" / "overrides.yaml").write_text(config_text)


def test_a_malformed_run_folder_config_is_named_by_replay(tmp_path, capsys):
    from wfeval.cli.replay import main

    _fake_run(tmp_path / "run", "metric: {psnr: [\n")
    assert main([str(tmp_path / "run")]) == 2
    err = capsys.readouterr().err
    assert f"malformed YAML in {tmp_path / 'run' / '.hydra' / 'config.yaml'}, line 2" in err and "Traceback" not in err


def test_a_malformed_overrides_yaml_is_named_by_resume(tmp_path, capsys):
    from wfeval.cli.resume import main

    _fake_run(tmp_path / "run", "- model=python\n- [\n")
    assert main([str(tmp_path / "run")]) == 2
    assert f"malformed YAML in {tmp_path / 'run' / '.hydra' / 'overrides.yaml'}" in capsys.readouterr().err


def _frame_count(run_root):
    results = json.loads((only_run_dir(run_root / "outputs" / "runs") / "results.json").read_text())["results"]
    return results["gridworld.frame_count"]["normalized_stats"]


def test_extra_metrics_finds_a_search_path_metric_as_metric_does(tmp_path):
    common = [f"hydra.searchpath=[{SUPPORT_CONF}]", "benchmark.num_samples=2", "run.trust=[wfeval_test_plugins.]"]
    (tmp_path / "a").mkdir()
    (tmp_path / "b").mkdir()
    chosen = cli(tmp_path / "a", *common, "metric=[frame_count]")
    extra = cli(tmp_path / "b", *common, "metric=[generated_rate]", "extra_metrics=[frame_count]")
    assert chosen.returncode == 0 and extra.returncode == 0, (chosen.stderr[-2000:], extra.stderr[-2000:])
    assert _frame_count(tmp_path / "a") == _frame_count(tmp_path / "b")


def test_an_unknown_extra_metric_suggests_search_path_metrics_too(tmp_path):
    proc = cli(tmp_path, f"hydra.searchpath=[{SUPPORT_CONF}]", "metric=[generated_rate]", "extra_metrics=[frame_cont]")
    assert_refused(proc, "Unknown metric 'frame_cont'", "Did you mean: frame_count")


def test_a_search_path_metric_through_extra_metrics_is_still_subject_to_trust(tmp_path):
    proc = cli(tmp_path, f"hydra.searchpath=[{SUPPORT_CONF}]", "metric=[generated_rate]", "extra_metrics=[frame_count]",
               "run.limit=1")
    assert_refused(proc, "metric.frame_count._target_: 'wfeval_test_plugins.FrameCount'", "frame_count.yaml")
