"""Issue 46, item 1: every record wfeval reads back from a store is sealed (wfeval/storage/seal.py).

A generation record whose ``generated_video`` was pointed at the request's reference video, a
metric row whose value was edited, a probing record whose probe scores were edited, a record cut
short or garbled, and a record written before records were sealed are each refused (an event of
the run names the file), recomputed and never served: the run gives the number a fresh store
gives, and no sample is counted as a failure of the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.conftest import read_jsonl
from tests.robustness._run import wfeval

STATIC = ("model=static", "metric=[psnr]")


def _records(store: Path, folder: str) -> list[Path]:
    return sorted((store / folder).rglob("*.json"))


def _edit(path: Path, change) -> None:
    """Change a record by hand, as a user or a tool would: its stale seal stays."""
    record = json.loads(path.read_text())
    change(record)
    path.write_text(json.dumps(record, indent=1))


def _refusals(ran) -> list[dict]:
    return [e for e in read_jsonl(ran.run_dir / "events.jsonl") if e.get("event") == "record_refused"]


def _fresh(monkeypatch, capsys, tmp_path: Path, *overrides: str, measurement: str) -> float:
    """The value a run on a store of its own gives."""
    ran = wfeval(monkeypatch, capsys, tmp_path / "fresh", *overrides, name="run")
    assert ran.code == 0, ran.err
    return ran.value(measurement)


def test_a_generation_record_pointed_at_the_reference_is_refused_and_the_model_generates_again(
        monkeypatch, capsys, tmp_path):
    first = wfeval(monkeypatch, capsys, tmp_path, *STATIC, name="first")
    assert first.code == 0, first.err
    fresh = first.value("gridworld.psnr")
    assert 15 < fresh < 30  # the static model: far from its reference
    references = {r["request"]["sample_id"]: r["request"]["references"]["video"]
                  for r in read_jsonl(first.run_dir / "generations.jsonl")}
    edited = _records(tmp_path / "store", "generations")
    assert len(edited) == 3
    for path in edited:
        _edit(path, lambda record: record["artifacts"].update(generated_video=references[record["sample_id"]]))
    again = wfeval(monkeypatch, capsys, tmp_path, *STATIC, name="again")
    assert again.code == 0, again.err
    assert again.value("gridworld.psnr") == fresh  # not 100 dB: the reference is never served as the model's
    assert again.counts() == (3, 0) and all(g["status"] == "ok" for g in again.generations())
    refused = _refusals(again)
    assert sorted(e["path"] for e in refused) == sorted(map(str, edited))
    assert {(e["record"], e["why"], e["action"]) for e in refused} == {("generation record", "seal_mismatch",
                                                                         "regenerate")}
    assert "generation failed" not in again.out
    third = wfeval(monkeypatch, capsys, tmp_path, *STATIC, name="third")  # written again, sealed: served
    assert third.counts() == (0, 3) and third.value("gridworld.psnr") == fresh and not _refusals(third)


def test_an_edited_metric_row_is_refused_and_the_sample_scored_again(monkeypatch, capsys, tmp_path):
    first = wfeval(monkeypatch, capsys, tmp_path, *STATIC, name="first")
    fresh = first.value("gridworld.psnr")
    rows = _records(tmp_path / "store", "results")
    assert len(rows) == 3

    def forty_one(row):
        row["raw_value"] = row["normalized_value"] = 41.0
        row["components"]["per_frame"] = [41.0] * len(row["components"]["per_frame"])

    for path in rows:
        _edit(path, forty_one)
    again = wfeval(monkeypatch, capsys, tmp_path, *STATIC, name="again")
    assert again.code == 0, again.err
    assert again.value("gridworld.psnr") == fresh != 41.0
    assert sorted(e["path"] for e in _refusals(again)) == sorted(map(str, rows))
    assert {(e["record"], e["action"]) for e in _refusals(again)} == {("metric row", "rescore")}
    assert again.counts() == (0, 3)  # the generations were sound: served


def test_an_edited_probe_record_is_refused_and_the_true_probe_r2_measured_again(monkeypatch, capsys, tmp_path):
    probing = ("task=probing", "model=random_projection", "benchmark.num_samples=3", "protocol.train_episodes=4",
               "task.data.probing.num_frames=9", "protocol.horizons=[1]", "metric=[probe_r2]")
    fresh = _fresh(monkeypatch, capsys, tmp_path, *probing, measurement="gridworld.probe_r2")
    first = wfeval(monkeypatch, capsys, tmp_path, *probing, name="first", samples=None)
    assert first.value("gridworld.probe_r2") == fresh < 0.9
    records = _records(tmp_path / "store", "generations")
    assert len(records) == 3

    def perfect(record):
        for score in record["metadata"]["probing"]["observed"].values():
            if score["kind"] == "continuous":
                score["r2"] = 0.99

    for path in records:
        _edit(path, perfect)
    for path in _records(tmp_path / "store", "results"):
        path.unlink()  # the rows scored from the sound records: the edited records must be read again
    again = wfeval(monkeypatch, capsys, tmp_path, *probing, name="again", samples=None)
    assert again.code == 0, again.err
    assert again.value("gridworld.probe_r2") == fresh
    assert sorted(e["path"] for e in _refusals(again)) == sorted(map(str, records))


@pytest.mark.parametrize("damage,why", [
    (lambda text: text[: len(text) // 2], "unreadable"),  # a write cut short
    (lambda text: text.replace('"', "'", 3), "unreadable"),  # garbled
    (lambda text: "[1, 2, 3]", "unreadable"),  # JSON, but no record
])
@pytest.mark.parametrize("folder,record", [("generations", "generation record"), ("results", "metric row")])
def test_a_truncated_or_garbled_record_is_refused_and_recomputed(monkeypatch, capsys, tmp_path, damage, why,
                                                                 folder, record):
    first = wfeval(monkeypatch, capsys, tmp_path, *STATIC, name="first", samples=1)
    [path] = _records(tmp_path / "store", folder)
    path.write_text(damage(path.read_text()))
    again = wfeval(monkeypatch, capsys, tmp_path, *STATIC, name="again", samples=1)
    assert again.code == 0, again.err
    assert again.value("gridworld.psnr") == first.value("gridworld.psnr")
    [event] = _refusals(again)
    assert (event["path"], event["record"], event["why"]) == (str(path), record, why)
    assert again.counts() == ((1, 0) if folder == "generations" else (0, 1))


@pytest.mark.parametrize("folder,record", [("generations", "generation record"), ("results", "metric row")])
def test_records_written_before_seals_existed_are_recomputed_once_and_the_run_says_so(monkeypatch, capsys,
                                                                                       tmp_path, folder, record):
    first = wfeval(monkeypatch, capsys, tmp_path, *STATIC, name="first")
    written = _records(tmp_path / "store", folder)
    assert len(written) == 3
    for path in written:  # as an older wfeval wrote them: no seal
        _edit(path, lambda record: record.pop("seal"))
    again = wfeval(monkeypatch, capsys, tmp_path, *STATIC, name="again")
    assert again.code == 0, again.err
    assert again.value("gridworld.psnr") == first.value("gridworld.psnr")
    refused = _refusals(again)
    assert sorted(e["path"] for e in refused) == sorted(map(str, written))
    assert {(e["record"], e["why"]) for e in refused} == {(record, "unsealed")}
    assert all("before records were sealed" in e["reason"] for e in refused)
    assert again.counts() == ((3, 0) if folder == "generations" else (0, 3))
    third = wfeval(monkeypatch, capsys, tmp_path, *STATIC, name="third")
    assert third.counts() == (0, 3) and not _refusals(third)  # written again, sealed: served


def test_an_edited_decoded_file_record_is_decoded_again_never_blamed_on_the_data(tmp_path):
    """A dataset folder's file is decoded once per store (a record of what it decodes to): a record
    naming other content is refused and the file decoded again, instead of the sample being left
    out as a file that 'changed since the run read it'."""
    from tests.benchmarks._folder_helpers import copy_example
    from tests.conftest import compose
    from wfeval.pipeline.runner import run_from_config

    root = copy_example(tmp_path / "data")

    def run(name):
        cfg = compose(["benchmark=folder", f"benchmark.dataset_root={root}", "model=static", "metric=[psnr]",
                       f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false"])
        summary = run_from_config(cfg, output_dir=tmp_path / name)
        return {k: v.to_dict() for k, v in summary.results.items()}, tmp_path / name

    first, _ = run("first")
    records = _records(tmp_path / "store", "decoded")
    assert len(records) == 8
    other = next(json.loads(p.read_text())["sha256"] for p in records if "[16," in p.read_text())
    edited = [p for p in records if "[16," in p.read_text() and json.loads(p.read_text())["sha256"] != other]
    for path in edited:  # every other video record now names the first one's content
        _edit(path, lambda record: record.update(sha256=other))
    again, run_dir = run("again")
    assert again == first
    [measurement] = again
    assert again[measurement]["n_valid"] == 4
    refused = [e for e in read_jsonl(run_dir / "events.jsonl") if e.get("event") == "record_refused"]
    assert sorted(e["path"] for e in refused) == sorted(map(str, edited)) and len(edited) == 3
    assert {(e["record"], e["action"]) for e in refused} == {("decoded-file record", "decode again")}
