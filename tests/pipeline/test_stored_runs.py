"""Replay and merge read a run's files a chunk of samples at a time into the runner's result table:
the last row per metric and sample wins, the chunk size changes nothing, and a run that did not
finish scoring is refused."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import compose, read_jsonl
from wfeval.api import GenerationRequest, MetricResult
from wfeval.cli.replay import replay
from wfeval.pipeline import spool
from wfeval.pipeline.merge_shards import merge_shards
from wfeval.pipeline.runner import run_from_config
from wfeval.pipeline.stored import StoredRunError, open_run
from wfeval.results import build_results
from wfeval.storage.rundir import read_jsonl as stored_rows

N = 11


def _run(tmp_path: Path, name: str, *extra: str) -> Path:
    cfg = compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false",
                   f"benchmark.num_samples={N}", "metric=[generated_rate,psnr,flicker,step_latency]",
                   "benchmark.group_by=[split,metadata.episode_seed]", *extra])
    run_from_config(cfg, tmp_path / name)  # records .hydra/config.yaml: the config it ran
    return tmp_path / name


def _append_rows_of_a_resumed_run(run_dir: Path) -> None:
    """Later rows for some (metric, sample) pairs, as a resumed run appends them, plus rows replay must ignore."""
    rows = read_jsonl(run_dir / "metrics.jsonl")
    later = []
    for row in rows:
        index = int(row["sample_id"][-5:])
        if row["metric_id"] == "psnr" and index in (0, 3, 10):
            later.append({**row, "raw_value": 7.25 + index, "normalized_value": 0.125})
        if row["metric_id"] == "step_latency" and index in (1, 4):  # custom aggregate: read back by offset
            later.append({**row, "valid": True, "skip_reason": None, "raw_value": 2.5 * index,
                          "diagnostics": {"status": "ok"}, "components": {"calls": 2, "latencies_ms": [1.0, 4.0 * index]}})
        if row["metric_id"] == "flicker" and index == 5:
            later.append({**row, "valid": False, "raw_value": None, "normalized_value": None,
                          "skip_reason": "RuntimeError: boom", "diagnostics": {"status": "error", "exception": "RuntimeError"}})
    later.append({**rows[0], "metric_id": "not_in_this_run"})
    later.append({**rows[0], "sample_id": "not-a-sample-of-this-run", "raw_value": -1.0})
    with (run_dir / "metrics.jsonl").open("a", encoding="utf-8") as handle:
        for row in later:
            handle.write(json.dumps(row) + "\n")
        handle.write('{"metric_id": "psnr", "sample_id": "gridworld-te')  # a torn last line


def _results_from_lists(run_dir: Path) -> bytes:
    """The oracle: every row held in lists, the last row per metric and sample kept by a dict
    (the former ``load_run``), aggregated by ``build_results`` over the lists."""
    manifest, metrics = open_run(run_dir)
    requests = [GenerationRequest.from_dict(r["request"]) for r in stored_rows(run_dir / "generations.jsonl")]
    latest = {}
    for row in stored_rows(run_dir / "metrics.jsonl"):  # torn lines skipped, as the runner reads them
        result = MetricResult.from_dict(row)
        latest[(result.metric_id, result.sample_id)] = result
    per_metric = {m: [latest[(m, r.sample_id)] for r in requests] for m in metrics}
    _, document = build_results(manifest=manifest, metrics=metrics, per_metric=per_metric, requests=requests,
                                rules=manifest.rules or {}, aggregation=metrics.aggregation,
                                required_metrics=manifest.required_metrics)
    return json.dumps(document.to_dict(), ensure_ascii=False, indent=2, allow_nan=True, default=str).encode() + b"\n"


def test_replay_keeps_the_last_row_per_metric_and_sample_whatever_the_chunk_size(tmp_path, monkeypatch):
    run_dir = _run(tmp_path, "run")
    replay(run_dir, tmp_path / "as_run")
    assert (tmp_path / "as_run" / "results.json").read_bytes() == (run_dir / "results.json").read_bytes()
    _append_rows_of_a_resumed_run(run_dir)
    expected = _results_from_lists(run_dir)
    for chunk in (1, 4, 10_000):
        monkeypatch.setattr(spool, "CHUNK", chunk)
        replay(run_dir, tmp_path / f"chunk{chunk}")
        assert (tmp_path / f"chunk{chunk}" / "results.json").read_bytes() == expected
    results = json.loads(expected)["results"]
    assert results["gridworld.psnr"]["n_valid"] == N
    assert results["gridworld.flicker"]["n_valid"] == N - 1
    assert results["gridworld.flicker"]["skip_breakdown"] == {"error: RuntimeError": 1}
    pooled = results["gridworld.step_latency"]["diagnostics"]  # the appended rows, read back by offset
    assert pooled["pooled_calls"] == 4 and pooled["pooled_mean_ms"] == (1.0 + 4.0 + 1.0 + 16.0) / 4
    assert json.loads(expected)["results"] != json.loads((run_dir / "results.json").read_text())["results"]


def test_replay_refuses_a_run_with_a_sample_missing_a_metric_row(tmp_path):
    run_dir = _run(tmp_path, "run")
    rows = read_jsonl(run_dir / "metrics.jsonl")
    kept = [r for r in rows if not (r["metric_id"] == "flicker" and r["sample_id"].endswith(("-00004", "-00007")))]
    (run_dir / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in kept))
    with pytest.raises(StoredRunError, match="metrics.jsonl has no 'flicker' row for 2 sample\\(s\\), "
                                             "e.g. 'gridworld-test-00004': the run did not finish scoring"):
        replay(run_dir, tmp_path / "out")


def test_merge_keeps_each_shards_last_rows_and_leaves_no_files_when_refused(tmp_path):
    shards = [_run(tmp_path, f"shard{i}", f"run.shard={i}/2") for i in range(2)]
    _append_rows_of_a_resumed_run(shards[1])
    document = merge_shards(shards, tmp_path / "merged")
    merged = tmp_path / "merged"
    assert (merged / "results.json").read_bytes() == _results_from_lists(merged)
    assert document.results["gridworld.psnr"].n_valid == N
    assert len(read_jsonl(merged / "metrics.jsonl")) == sum(len(list(stored_rows(s / "metrics.jsonl"))) for s in shards)
    assert [r["request"]["sample_id"] for r in read_jsonl(merged / "generations.jsonl")] == \
        [f"gridworld-test-{i:05d}" for i in range(N)]

    rows = list(stored_rows(shards[0] / "metrics.jsonl"))
    (shards[0] / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows if r["metric_id"] != "psnr"))
    with pytest.raises(StoredRunError, match=f"{shards[0]}: metrics.jsonl has no 'psnr' row for 5 sample"):
        merge_shards(shards, tmp_path / "refused")
    assert not (tmp_path / "refused").exists()


@pytest.mark.parametrize("file,line,change", [
    ("generations.jsonl", 2, lambda row: [1, 2, 3]),  # not a record at all
    ("generations.jsonl", 4, lambda row: {**row, "request": {**row["request"], "sample_id": 7}}),
    ("metrics.jsonl", 5, lambda row: {**row, "normalized_value": "nan?"}),
    ("metrics.jsonl", 0, lambda row: {**row, "diagnostics": "oops"}),
])
def test_replay_refuses_a_malformed_row_naming_its_file_instead_of_a_traceback(tmp_path, file, line, change):
    run_dir = _run(tmp_path, "run")
    path = run_dir / file
    lines = path.read_text().splitlines()
    lines[line] = json.dumps(change(json.loads(lines[line])))
    path.write_text("\n".join(lines) + "\n")
    offset = sum(len(text) + 1 for text in lines[:line])
    with pytest.raises(StoredRunError, match=rf"{file}.*at byte {offset}.*the file was changed or is not a run's"):
        replay(run_dir, tmp_path / "out")
