"""The run record: manifest.json and results.json read and written through one typed pair, older
folders read through their migration, the written bytes those of the document built."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from wfeval.api import GenerationRequest
from wfeval.metrics.basic import ArtifactCount
from wfeval.metrics.outcomes import scored
from wfeval.results import build_results
from wfeval.results.record import (
    MIGRATIONS,
    RUN_FORMAT_VERSION,
    ProtocolInfo,
    RunManifest,
    RunRecord,
    RunRecordError,
    RunResults,
    migrate_0_to_1,
    read_run_record,
    write_run_record,
)
from wfeval.storage.rundir import FILES, RunDirectory

OLD_RUN = Path(__file__).parent / "data" / "run_v0"


def _built() -> tuple[dict, RunResults]:
    manifest = {"run_id": "r", "config_hash": "c" * 64, "model": {"name": "m", "key": "k"},
                "benchmark": {"id": "b", "version": "1.0", "dataset_hash": "d" * 64, "metrics": ["artifact_count"]},
                "metric_selection": {"artifact_count": "benchmark"}}
    requests = [GenerationRequest(sample_id=f"s{i}", split="test") for i in range(3)]
    rows = {"artifact_count": [scored(r.sample_id, "artifact_count", v) for r, v in zip(requests, (1, 2, 4))]}
    _, results = build_results(manifest=manifest, metrics={"artifact_count": ArtifactCount()}, per_metric=rows,
                               requests=requests, rules={"group_by": ["split"]})
    return manifest, results


def _bytes_written(data: dict) -> str:
    return json.dumps(data, ensure_ascii=False, indent=2, allow_nan=True, default=str) + "\n"


def test_a_written_record_reads_back_equal_and_its_files_hold_the_document_built(tmp_path):
    manifest, results = _built()
    record = RunRecord(tmp_path, RunManifest.from_dict({"schema_version": RUN_FORMAT_VERSION, "status": "completed",
                                                         **manifest}), results)
    write_run_record(tmp_path, record)
    back = read_run_record(tmp_path)
    assert back.results == results and back.manifest == record.manifest
    assert (tmp_path / FILES.results).read_text(encoding="utf-8") == _bytes_written(results.to_dict())
    assert list(results.to_dict()) == ["schema_version", "run_id", "config_hash", "benchmark", "model", "protocol",
                                       "metrics", "metric_selection", "results", "slices", "scorecard", "evidence"]
    row = back.results.results["b.artifact_count"]
    assert (row.n_valid, row.n_total, row.valid) == (3, 3, True)
    assert row.value == pytest.approx(7 / 3)
    assert back.results.info("b.artifact_count").selected_by == "benchmark"
    assert back.results.slices["b.artifact_count"]["split=test"].n_valid == 3


def test_keys_this_code_does_not_know_are_kept_in_their_place(tmp_path):
    data = {"schema_version": RUN_FORMAT_VERSION, "run_id": "r", "from_the_future": {"x": 1}, "status": "completed",
            "model": {"name": "m", "added_later": [1, 2]}}
    RunDirectory(tmp_path).write_json(FILES.manifest, data)
    manifest = read_run_record(tmp_path).manifest
    assert manifest.model.name == "m" and manifest.extra == {"from_the_future": {"x": 1}}
    write_run_record(tmp_path, RunRecord(tmp_path, manifest))
    assert json.loads((tmp_path / FILES.manifest).read_text()) == data
    assert list(json.loads((tmp_path / FILES.manifest).read_text())) == list(data)


def test_an_unversioned_run_folder_reads_through_its_migration(tmp_path):
    folder = tmp_path / "old"
    shutil.copytree(OLD_RUN, folder)
    raw = json.loads((folder / FILES.results).read_text())
    assert "schema_version" not in raw and "protocol" not in raw and "slices" not in raw
    record = read_run_record(folder)
    assert record.results.schema_version == record.manifest.schema_version == RUN_FORMAT_VERSION
    assert record.protocol == ProtocolInfo(name="open_loop", driver="open_loop")
    assert record.protocol.label == "open_loop" and record.manifest.protocol is None
    assert record.results.slices == {} and record.results.metric_selection == {}
    assert record.results.results["gridworld.psnr"].value == 100.0
    assert record.results.evidence.eligible is True and record.status == "completed"
    assert record.model_name == "oracle" and record.benchmark_id == "gridworld"
    assert list(record.results.to_dict())[:6] == ["schema_version", "run_id", "config_hash", "benchmark", "model",
                                                  "protocol"]


def test_every_reader_reads_an_unversioned_folder_through_the_record(tmp_path):
    from wfeval.report.html.load import load_run
    from wfeval.report.rows import rows
    from wfeval.report.runs import column_key, load_entries
    from wfeval.results.measurements import Results
    from wfeval.trackers.record import record_of

    folder = tmp_path / "old"
    shutil.copytree(OLD_RUN, folder)
    [entry] = load_entries([folder])
    assert (entry.protocol, column_key(entry), entry.model_name) == ("open_loop", "gridworld", "oracle")
    assert [(r["measurement"], r["value"], r["protocol"]) for r in rows(entry.document)] == [
        ("gridworld.psnr", 100.0, "open_loop"), ("gridworld.ssim", 1.0, "open_loop")]
    run = load_run(folder)
    assert run.status == "completed" and run.entry().protocol == "open_loop"
    tracked = record_of(folder, config={}, overrides=[])
    assert tracked.tags["wfeval.protocol"] == "open_loop" and tracked.metrics["gridworld.psnr/value"] == 100.0
    results = Results(entry.document, folder)
    assert results["gridworld.ssim"].value == 1.0 and results.eligible
    assert results.document["protocol"] == {"name": "open_loop", "driver": "open_loop"}


def test_each_old_version_has_a_named_migration_to_the_next():
    assert MIGRATIONS == {"wfeval.run/0": migrate_0_to_1}
    lifted = migrate_0_to_1({"run_id": "r", "results": {}}, "results")
    assert lifted["schema_version"] == RUN_FORMAT_VERSION
    assert lifted["protocol"] == {"name": "open_loop", "driver": "open_loop"}


def test_a_format_version_this_code_does_not_know_is_refused(tmp_path):
    RunDirectory(tmp_path).write_json(FILES.results, {"schema_version": "wfeval.run/9", "run_id": "r"})
    with pytest.raises(RunRecordError, match=r"results format 'wfeval.run/9' is not one this wfeval reads"):
        read_run_record(tmp_path)


def test_a_folder_without_results_reads_with_none_and_the_manifests_protocol(tmp_path):
    RunDirectory(tmp_path).write_json(FILES.manifest, {"schema_version": RUN_FORMAT_VERSION, "run_id": "r",
                                                       "status": "failed", "error": "boom",
                                                       "protocol": {"name": "closed_loop", "driver": "closed_loop",
                                                                    "policy": {"_target_": "x.RandomPolicy"}}})
    record = read_run_record(tmp_path)
    assert record.results is None and record.status == "failed" and record.manifest.error == "boom"
    assert record.protocol.label == "closed_loop(random)"
