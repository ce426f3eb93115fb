"""A dataset with a corrupt video, a missing file, a duplicated id, a '../' id and a malformed line:
a clear report naming each, and the run over the rest completes with coverage below 1."""

from __future__ import annotations

import json

from tests.benchmarks._folder_helpers import bad_dataset
from tests.conftest import compose, only_run_dir, read_jsonl, run_cli
from wfeval.pipeline.runner import run_from_config

EXPECTED_REPORT = [
    "manifest.jsonl:5: sample 'bad-corrupt': reference_video 'videos/corrupt.mkv': ",
    "manifest.jsonl:6: sample 'bad-missing': initial_frame 'frames/missing.png': file not found",
    "manifest.jsonl:7: duplicate sample_id 'gridworld-test-00000' (first on line 1) (line refused)",
    "manifest.jsonl:8: sample_id '../evil' contains a '.' or '..' part (it would escape the output folder) "
    "(line refused)",
    "manifest.jsonl:9: malformed JSON (",
]


def test_bad_dataset_is_reported_and_the_rest_is_evaluated_with_coverage_below_one(tmp_path, store, capsys):
    root = bad_dataset(tmp_path / "data")
    cfg = compose(["benchmark=folder", f"benchmark.dataset_root={root}", "model=oracle", f"run.store_dir={store}",
                   "run.progress=off"])
    summary = run_from_config(cfg, output_dir=tmp_path / "run")
    report = capsys.readouterr().err
    assert "4 of 9 sample(s) usable" in report
    for line in EXPECTED_REPORT:
        assert line in report, line

    # 2 unreadable samples and 3 refused lines: each is a sample the data could not provide
    rate = summary.results["gridworld_tiny.generated_rate"]
    assert (rate.n_total, rate.n_valid, rate.n_skipped) == (9, 4, 5)
    assert rate.normalized_stats["ratio"] == 1.0  # the model is not blamed for the data
    assert rate.diagnostics["coverage"] == 4 / 9
    assert rate.skip_breakdown == {"input unavailable (benchmark data problem)": 5}
    psnr = summary.results["gridworld_tiny.psnr"]
    assert (psnr.n_valid, psnr.n_skipped) == (4, 5)

    run = tmp_path / "run"
    results = json.loads((run / "results.json").read_text())
    # the dataset check is provenance: the manifest keeps it, results.json keeps the results
    dataset = json.loads((run / "manifest.json").read_text())["benchmark"]["runtime"]["dataset"]
    assert (dataset["lines"], dataset["samples"], dataset["usable"], dataset["unreadable"],
            dataset["refused_lines"]) == (9, 6, 4, 2, 3)
    assert dataset["coverage"] == 4 / 9
    assert [p["line"] for p in dataset["problems"]] == [5, 6, 7, 8, 9]
    assert results["results"]["gridworld_tiny.generated_rate"]["diagnostics"]["coverage"] < 1

    samples = {s["sample_id"]: s for s in read_jsonl(run / "samples.jsonl")}
    assert sorted(samples) == ["bad-corrupt", "bad-missing", *[f"gridworld-test-0000{i}" for i in range(4)],
                               "refused-line-7", "refused-line-8", "refused-line-9"]
    assert samples["refused-line-9"]["stop_reason"] == "input_error"
    assert "manifest.jsonl line 9 refused: malformed JSON" in samples["refused-line-9"]["metadata"]["input_error"]
    corrupt = samples["bad-corrupt"]
    assert corrupt["success"] is False and corrupt["stop_reason"] == "input_error"
    assert corrupt["metadata"]["dataset_line"] == 5 and "videos/corrupt.mkv" in corrupt["metadata"]["input_error"]
    assert samples["gridworld-test-00001"]["metadata"]["dataset_line"] == 2
    steps = {s["sample_id"]: s for s in read_jsonl(run / "steps.jsonl")}
    assert steps["bad-missing"]["status"] == "not_generated"  # never sent to the model
    events = [e for e in read_jsonl(run / "events.jsonl") if e["event"] == "dataset_checked"]
    assert events and events[0]["refused_lines"] == 3


def test_the_same_from_the_command_line(tmp_path):
    root = bad_dataset(tmp_path / "data")
    proc = run_cli(["benchmark=folder", f"benchmark.dataset_root={root}", "metric=[generated_rate]",
                    f"run.store_dir={tmp_path / 'store'}", "run.progress=off"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    for line in EXPECTED_REPORT:
        assert line in proc.stderr, line
    assert "4/9" in proc.stdout  # valid/total in the results table: refused lines count too
    run = only_run_dir(tmp_path / "outputs" / "runs")
    assert json.loads((run / "manifest.json").read_text())["status"] == "completed"


def test_strict_mode_refuses_before_any_generation(tmp_path):
    root = bad_dataset(tmp_path / "data")
    proc = run_cli(["benchmark=folder", f"benchmark.dataset_root={root}", "benchmark.strict=true",
                    f"run.store_dir={tmp_path / 'store'}", "run.progress=off"], cwd=tmp_path)
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    for line in EXPECTED_REPORT[1:]:  # the corrupt video is only found when decoding
        assert line in proc.stderr, line
    assert not list((tmp_path / "outputs").rglob("steps.jsonl"))
