"""A rerun, a rescoring or a sweep costs only what changed: metric rows are cached in the store by
(metric identity and config, content hashes of what the metric reads); arrays are read once."""

from __future__ import annotations

import dataclasses
import json

import pytest

from tests.conftest import compose
from wfeval.api import GenerationRequest, GenerationResult, MetricResult
from wfeval.metrics.reference import PSNR
from wfeval.pipeline.runner import run_from_config
from wfeval.pipeline.score import score_all
from wfeval.storage.metric_rows import ResultCache, metric_identity


def _events(run_dir):
    return [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]


def _score_event(run_dir):
    return next(e for e in _events(run_dir) if e["event"] == "phase_finished" and e["phase"] == "score")


def _metric_rows(run_dir):
    return sorted((json.loads(line) for line in (run_dir / "metrics.jsonl").read_text().splitlines()),
                  key=lambda r: (r["metric_id"], r["sample_id"]))


@pytest.fixture()
def base(tmp_path):
    return [f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "benchmark.num_samples=3", "model=static",
            "metric=[psnr,ssim,flicker,generated_rate]"]


def test_a_second_run_takes_every_row_from_the_cache_and_computes_nothing(tmp_path, base, monkeypatch):
    first = run_from_config(compose(base), output_dir=tmp_path / "a")
    assert _score_event(tmp_path / "a")["result_cache"] == {"hits": 0, "misses": 12}
    monkeypatch.setattr(PSNR, "compute_sample", lambda *a: pytest.fail("psnr recomputed"))
    second = run_from_config(compose(base), output_dir=tmp_path / "b")
    assert _score_event(tmp_path / "b")["result_cache"] == {"hits": 12, "misses": 0}
    assert {k: v.to_dict() for k, v in second.results.items()} == {k: v.to_dict() for k, v in first.results.items()}
    assert _metric_rows(tmp_path / "b") == _metric_rows(tmp_path / "a")  # every row written to the new run


def test_a_changed_option_recomputes_only_that_metric(tmp_path, base):
    run_from_config(compose(base), output_dir=tmp_path / "a")
    run_from_config(compose([*base, "metric.psnr.max_db=60"]), output_dir=tmp_path / "b")
    assert _score_event(tmp_path / "b")["result_cache"] == {"hits": 9, "misses": 3}


def test_another_models_generations_are_scored_afresh_and_rescoring_a_run_is_free(tmp_path, base):
    run_from_config(compose(base), output_dir=tmp_path / "a")
    run_from_config(compose([*base, "model=random_actions"]), output_dir=tmp_path / "b")
    assert _score_event(tmp_path / "b")["result_cache"]["misses"] >= 9  # other videos (generated_rate may hit)
    run_from_config(compose([*base, f"run.from_run={tmp_path / 'b'}"]), output_dir=tmp_path / "c")
    assert _score_event(tmp_path / "c")["result_cache"] == {"hits": 12, "misses": 0}


class _Flaky:
    """A built-in-looking metric that errors on its first call."""

    name, version, required_artifacts, higher_is_better = "flaky", "1.0", (), None
    __module__ = "wfeval.metrics.flaky_test"
    calls = 0

    def compute_sample(self, request, result):
        type(self).calls += 1
        if type(self).calls == 1:
            raise RuntimeError("transient")
        return MetricResult(sample_id=request.sample_id, metric_id="flaky", raw_value=1.0)


def test_errors_are_not_cached_and_options_that_only_aggregate_do_not_split_the_cache(tmp_path):
    cache = ResultCache(tmp_path)
    pairs = [(GenerationRequest(sample_id="s0"), GenerationResult(sample_id="s0"))]
    metric = _Flaky()
    first = score_all({"flaky": metric}, pairs, done={}, on_result=lambda *a: None, cache=cache)
    assert first["flaky"][0].status == "error"
    second = score_all({"flaky": metric}, pairs, done={}, on_result=lambda *a: None, cache=cache)
    third = score_all({"flaky": metric}, pairs, done={}, on_result=lambda *a: None, cache=cache)
    assert second["flaky"][0].status == third["flaky"][0].status == "ok" and _Flaky.calls == 2
    assert metric_identity(PSNR(confidence=0.9)) == metric_identity(PSNR(confidence=0.99))
    assert metric_identity(PSNR(max_db=50)) != metric_identity(PSNR())


def test_every_array_is_decoded_once_per_run_whatever_the_number_of_metrics(tmp_path, base, monkeypatch):
    import wfeval.storage.artifacts as artifacts

    run_from_config(compose(base), output_dir=tmp_path / "a")  # generations cached
    decoded = []
    real = artifacts._zstd

    def counting():
        decoded.append(1)
        return real()

    monkeypatch.setattr(artifacts, "_zstd", counting)
    run_from_config(compose([*base, "metric=[psnr,ssim,flicker,mse,mae]", "run.report=false"]),
                    output_dir=tmp_path / "b")  # (the HTML report reads the videos again to draw them)
    # 3 samples x (reference + generated), decoded by the reader, plus the generation cache's check of
    # the 3 generated videos, plus the benchmark's put of its 3 inputs and 3 references (each checked
    # against the stored object, so that a corrupt one is rebuilt): not once per metric (27 with
    # every metric reading its own arrays)
    assert len(decoded) == 6 + 3 + 6


def test_the_fvd_identity_names_the_weights_it_resolves_to(tmp_path):
    from tests.features._weights import require_i3d_weights
    from wfeval.metrics.fvd import FVD

    info = require_i3d_weights()
    metric = FVD(feature_dir=str(tmp_path))
    assert metric_identity(metric)["config"]["__identity__"] == {"weights_sha256": info.sha256}
    other = FVD(feature_dir=str(tmp_path))
    other._weights = dataclasses.replace(info, sha256="0" * 64)  # as if the file behind "auto" were replaced
    assert metric_identity(other) != metric_identity(metric)


def test_cached_rows_are_served_before_they_are_written_and_on_disk_after_close(tmp_path, monkeypatch):
    """The result cache writes rows on a background thread: a row put is served at once (from
    memory while its write waits), the rows waiting are bounded, and close() leaves every row on disk."""
    import threading

    from wfeval.storage import metric_rows

    gate = threading.Event()
    real = metric_rows.atomic_write_bytes

    def slow(path, data, **kw):
        gate.wait(10)
        return real(path, data, **kw)

    monkeypatch.setattr(metric_rows, "atomic_write_bytes", slow)
    monkeypatch.setattr(metric_rows, "MAX_PENDING", 3)
    cache = ResultCache(tmp_path)
    rows = [MetricResult(sample_id=f"s{i}", metric_id="psnr", raw_value=float(i)) for i in range(5)]
    for i, row in enumerate(rows[:3]):
        cache.put("d" * 64, f"{i:064d}", row)
    assert [cache.get("d" * 64, f"{i:064d}").raw_value for i in range(3)] == [0.0, 1.0, 2.0]
    assert not list(tmp_path.rglob("*.json"))  # nothing written yet
    blocked = threading.Thread(target=cache.put, args=("d" * 64, f"{3:064d}", rows[3]))
    blocked.start()
    blocked.join(0.3)
    assert blocked.is_alive()  # a fourth row waits for room
    gate.set()
    blocked.join(10)
    cache.put("d" * 64, f"{4:064d}", rows[4])
    cache.close()
    assert len(list(tmp_path.rglob("*.json"))) == 5
    fresh = ResultCache(tmp_path)
    assert [fresh.get("d" * 64, f"{i:064d}").raw_value for i in range(5)] == [0.0, 1.0, 2.0, 3.0, 4.0]
