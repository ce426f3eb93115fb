"""A shared cache another run invalidates, a failure pinned for good: I3D features are addressed by
their own bytes (bytes that depend on the thread count go to a file of their own, never replacing
what a run references), a cached metric row is served only while the files it names hold the bytes
it names, a row naming files that are not intact is never cached, and ``run.recompute`` forces a
recompute. The FVD cases use the real I3D (2 samples)."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import read_jsonl
from tests.features._weights import require_i3d_weights
from tests.robustness._run import wfeval
from wfeval.api import ArtifactRef, MetricResult
from wfeval.storage.features import FeatureStore
from wfeval.storage.metric_rows import ResultCache

VIDEO = "ab" * 32


def _store(tmp_path) -> FeatureStore:
    return FeatureStore(tmp_path / "cache", "w" * 64, "r" * 64)


def test_features_of_other_bytes_go_beside_the_first_never_over_them(tmp_path):
    store = _store(tmp_path)
    first = store.put(VIDEO, np.full(4, 0.5, np.float32))
    second = store.put(VIDEO, np.full(4, 0.5 + 1e-6, np.float32))  # another thread count's rounding
    assert first.uri != second.uri and first.sha256 != second.sha256
    for ref in (first, second):
        assert hashlib.sha256(open(ref.uri, "rb").read()).hexdigest() == ref.sha256  # both intact
    assert store.put(VIDEO, np.full(4, 0.5, np.float32)).uri == first.uri  # the same bytes: the same file


def test_a_feature_file_whose_bytes_do_not_match_its_name_is_removed_never_served(tmp_path):
    store = _store(tmp_path)
    ref = store.put(VIDEO, np.arange(4, dtype=np.float32))
    with open(ref.uri, "r+b") as handle:  # same length, other bytes
        handle.seek(-1, 2)
        handle.write(b"\x7f")
    assert store.get(VIDEO) is None and not store.has(VIDEO)


def test_a_cache_of_an_older_wfeval_is_still_read(tmp_path):
    store = _store(tmp_path)
    legacy = store.path(VIDEO)
    legacy.parent.mkdir(parents=True)
    np.save(legacy, np.ones(3, np.float32))
    assert store.has(VIDEO) and store.get(VIDEO).uri == str(legacy)


def _row(ref: ArtifactRef) -> MetricResult:
    return MetricResult(sample_id="s", metric_id="fvd", raw_value=None, diagnostics={"status": "ok"},
                        artifact_refs={"generated_features": ref})


def test_a_cached_row_whose_feature_file_holds_other_bytes_is_recomputed_not_served(tmp_path):
    store, cache = _store(tmp_path), ResultCache(tmp_path / "store")
    ref = store.put(VIDEO, np.arange(4, dtype=np.float32))
    cache.put("d" * 64, "k" * 64, _row(ref))
    assert cache.get("d" * 64, "k" * 64) is not None
    np.save(ref.uri, np.arange(4, dtype=np.float32) + 1)  # replaced by someone else
    assert cache.get("d" * 64, "k" * 64) is None


def test_a_row_naming_a_file_that_is_not_there_is_never_cached(tmp_path):
    cache = ResultCache(tmp_path / "store")
    gone = ArtifactRef(kind="i3d_features", uri=str(tmp_path / "gone.npy"), sha256="c" * 64,
                       media_type="application/x-npy", shape=(4,), dtype="float32")
    cache.put("d" * 64, "k" * 64, _row(gone))
    assert not list((tmp_path / "store").rglob("*.json"))


def _fvd(monkeypatch, capsys, tmp_path, name, *extra):
    return wfeval(monkeypatch, capsys, tmp_path, "model=static", "metric=[fvd]", "metric.fvd.bootstrap=50",
                  f"metric.fvd.feature_dir={tmp_path / 'features'}", *extra, name=name, samples=2)


def _feature_refs(run_dir):
    return [ref for row in read_jsonl(run_dir / "metrics.jsonl") for ref in row["artifact_refs"].values()]


def _hits(run_dir):
    return next(e for e in read_jsonl(run_dir / "events.jsonl")
                if e.get("event") == "phase_finished" and e.get("phase") == "score")["result_cache"]


@pytest.fixture
def other_thread_count(monkeypatch):
    """I3D features whose last bits differ, as with OMP_NUM_THREADS=1 against the default."""
    from wfeval.features.extractor import I3DExtractor

    real = I3DExtractor.features

    def features(self, clips):
        return (real(self, clips) * np.float32(1 + 1e-6)).astype(np.float32)

    def switch():
        monkeypatch.setattr(I3DExtractor, "features", features)
    return switch


def test_features_recomputed_in_another_setting_leave_every_earlier_run_valid(monkeypatch, capsys, tmp_path,
                                                                              other_thread_count):
    require_i3d_weights()
    first = _fvd(monkeypatch, capsys, tmp_path, "first")
    assert first.code == 0 and first.results["gridworld.fvd"]["valid"], first.err
    value = first.value("gridworld.fvd")
    referenced = {ref["uri"]: ref["sha256"] for ref in _feature_refs(first.run_dir)}

    other_thread_count()
    second = _fvd(monkeypatch, capsys, tmp_path, "second", "run.recompute=[fvd]")
    assert second.code == 0 and second.results["gridworld.fvd"]["valid"], second.err
    assert _hits(second.run_dir)["hits"] == 0  # run.recompute: nothing served from the cache
    new = {ref["uri"] for ref in _feature_refs(second.run_dir)}
    assert new.isdisjoint(referenced)  # other bytes, other files
    for uri, sha in referenced.items():  # the first run's features are untouched
        assert hashlib.sha256(open(uri, "rb").read()).hexdigest() == sha

    from wfeval.cli.replay import main as replay

    assert replay([str(first.run_dir), "--out", str(tmp_path / "replayed")]) == 0
    replayed = json.loads((tmp_path / "replayed" / "results.json").read_text())["results"]["gridworld.fvd"]
    assert replayed["valid"] and replayed["diagnostics"]["value"] == value  # exactly the first run's FVD


def test_a_deleted_feature_file_is_recomputed_and_the_failure_is_never_served_from_the_cache(
        monkeypatch, capsys, tmp_path, other_thread_count):
    require_i3d_weights()
    first = _fvd(monkeypatch, capsys, tmp_path, "first")
    assert first.code == 0 and first.results["gridworld.fvd"]["valid"], first.err
    for uri in sorted({ref["uri"] for ref in _feature_refs(first.run_dir)})[:3]:  # deleted by hand
        Path(uri).unlink()
    other_thread_count()
    second = _fvd(monkeypatch, capsys, tmp_path, "second")  # recomputes the missing ones, with other bytes
    assert second.code == 0 and second.results["gridworld.fvd"]["valid"], second.err
    third = _fvd(monkeypatch, capsys, tmp_path, "third")  # the first command again: served, never a failure
    assert third.code == 0, third.err
    fvd = third.results["gridworld.fvd"]
    assert fvd["valid"] and "sha256 mismatch" not in json.dumps(fvd)
    assert "n/a" not in third.table_line("gridworld.fvd")


@pytest.mark.parametrize("value, words", [("[fdv]", "'fdv' is not a metric of this run"),
                                          ("5", "expected a list of metric ids")])
def test_run_recompute_names_a_bad_value(monkeypatch, capsys, tmp_path, value, words):
    ran = wfeval(monkeypatch, capsys, tmp_path, "metric=[psnr]", f"run.recompute={value}", samples=1)
    assert ran.code == 2 and "run.recompute" in ran.err and words in ran.err, ran.err


def test_run_recompute_all_scores_afresh_with_the_same_results_and_config_hash(monkeypatch, capsys, tmp_path):
    first = wfeval(monkeypatch, capsys, tmp_path, "metric=[psnr,ssim]", name="first", samples=2)
    again = wfeval(monkeypatch, capsys, tmp_path, "metric=[psnr,ssim]", "run.recompute=all", name="again",
                   samples=2)
    assert first.code == again.code == 0
    assert _hits(again.run_dir) == {"hits": 0, "misses": 4}
    assert first.results == again.results
    assert first.manifest["config_hash"] == again.manifest["config_hash"]  # how, not what
