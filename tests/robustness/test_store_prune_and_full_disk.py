"""``python -m wfeval.store prune`` never deletes what a kept run references -- through its
``generations.jsonl``, the one a running run is still writing, or its ``metrics.jsonl`` -- and a full
disk under a metric's feature writing fails the run as a storage fault (exit 1, the path), while a
full disk under the report or the metric-row cache costs only that file: the results are complete."""

from __future__ import annotations

import errno
import json

import numpy as np
import pytest

from tests.conftest import read_jsonl
from tests.robustness._run import wfeval
from wfeval.storage.artifacts import ArtifactStore
from wfeval.storage.usage import prune


def _prune(tmp_path, runs):
    return prune(tmp_path / "store", [runs], older_than=0, max_size=None, out=open("/dev/null", "w"))


def _object_of(store_dir, ref):
    return (store_dir / "objects" / ref.sha256[:2]).glob(f"{ref.sha256}*")


def test_prune_keeps_an_object_only_a_metric_row_names(tmp_path):
    store = ArtifactStore(tmp_path / "store")
    ref = store.put_array(np.ones((2, 2), np.uint8), kind="array")
    run = tmp_path / "runs" / "r1"
    run.mkdir(parents=True)
    row = {"metric_id": "mine", "sample_id": "s", "artifact_refs": {"heatmap": ref.to_dict()}}
    (run / "metrics.jsonl").write_text(json.dumps(row) + "\n")
    report = _prune(tmp_path, tmp_path / "runs")
    assert report["removed"] == 0 and list(_object_of(tmp_path / "store", ref))


def test_prune_keeps_the_objects_of_a_run_still_writing_its_generations(tmp_path):
    store = ArtifactStore(tmp_path / "store")
    kept = store.put_array(np.zeros((2, 2), np.uint8), kind="video")
    loose = store.put_array(np.full((2, 2), 3, np.uint8), kind="video")
    run = tmp_path / "runs" / "running"
    run.mkdir(parents=True)
    record = {"request": {"sample_id": "s"}, "result": {"artifacts": {"generated_video": kept.to_dict()}}}
    (run / ".generations.jsonl.partial").write_text(json.dumps(record) + "\n" + '{"request": {"sam')  # mid-line
    report = _prune(tmp_path, tmp_path / "runs")
    assert report["removed"] == 1
    assert list(_object_of(tmp_path / "store", kept)) and not list(_object_of(tmp_path / "store", loose))


def test_prune_after_a_real_run_leaves_it_replayable(monkeypatch, capsys, tmp_path):
    ran = wfeval(monkeypatch, capsys, tmp_path, "metric=[psnr]", samples=2)
    before = json.loads((ran.run_dir / "results.json").read_text())["results"]
    report = _prune(tmp_path, tmp_path)
    assert report["removed"] == 0
    again = wfeval(monkeypatch, capsys, tmp_path, "metric=[psnr]", f"run.from_run={ran.run_dir}", name="again",
                   samples=None)
    assert again.code == 0 and again.results["gridworld.psnr"] == before["gridworld.psnr"]


def _enospc(*args, **kwargs):
    raise OSError(errno.ENOSPC, "No space left on device", str(args[0]) if args else None)


def test_a_full_disk_while_writing_features_is_a_storage_fault_naming_the_path(monkeypatch, capsys, tmp_path):
    from tests.features._weights import require_i3d_weights
    from wfeval.storage import features

    require_i3d_weights()
    monkeypatch.setattr(features, "atomic_write_bytes", _enospc)
    ran = wfeval(monkeypatch, capsys, tmp_path, "model=static", "metric=[fvd]", "metric.fvd.bootstrap=10",
                 f"metric.fvd.feature_dir={tmp_path / 'features'}", samples=2)
    assert ran.code == 1, ran.err
    assert "No space left on device (ENOSPC)" in ran.err and str(tmp_path / "features") in ran.err
    assert ran.manifest["failure_kind"] == "storage" and not (ran.run_dir / "results.json").exists()


def test_a_full_disk_under_the_metric_row_cache_loses_no_row(monkeypatch, capsys, tmp_path):
    from wfeval.storage import metric_rows

    real = metric_rows.atomic_write_bytes

    def only_the_cache(path, data, **options):  # the metric-row cache (its background writer) writes through this
        if "/store/results/" in str(path):
            _enospc(path)
        return real(path, data, **options)

    monkeypatch.setattr(metric_rows, "atomic_write_bytes", only_the_cache)
    ran = wfeval(monkeypatch, capsys, tmp_path, "metric=[psnr,ssim]", samples=2)
    assert ran.code == 0, ran.err
    assert len(read_jsonl(ran.run_dir / "metrics.jsonl")) == 4
    assert ran.value("gridworld.psnr") == 100.0 and ran.value("gridworld.ssim") == 1.0
    assert not list((tmp_path / "store" / "results").rglob("*.json"))


def test_a_full_disk_under_the_report_leaves_complete_results(monkeypatch, capsys, tmp_path):
    import wfeval.report.html as html

    def write_report(runs, out, **kwargs):
        _enospc(out)

    monkeypatch.setattr(html, "write_report", write_report)
    with pytest.warns(RuntimeWarning, match=r"report.html not written: OSError: .*No space left on device"):
        ran = wfeval(monkeypatch, capsys, tmp_path, "metric=[psnr]", samples=2, report=True)
    assert ran.code == 0 and ran.value("gridworld.psnr") == 100.0
    assert not (ran.run_dir / "report.html").exists()
    assert any(e["event"] == "report_failed" for e in read_jsonl(ran.run_dir / "events.jsonl"))
