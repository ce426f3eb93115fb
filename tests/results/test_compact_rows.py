"""What a streaming run keeps of each sample gives the same numbers as the rows themselves."""

from __future__ import annotations

import json
import math

import numpy as np
import pytest

from wfeval.api import AggregateResult, ArtifactRef, GenerationRequest, GenerationResult, MetricResult
from wfeval.metrics.base import BaseMetric, default_aggregate
from wfeval.metrics.outcome_columns import OutcomeColumns
from wfeval.metrics.outcomes import errored, scored, skipped
from wfeval.pipeline.spool import request_spool, stored_pairs
from wfeval.results import build_results, dataset_hash
from wfeval.results.document import DatasetHash
from wfeval.results.sample_table import ResultTable
from wfeval.storage.metric_rows import ResultCache
from wfeval.storage.rundir import JsonlWriter, read_jsonl


def _rows() -> list[MetricResult]:
    rows = []
    for i in range(40):
        sid = f"s{i:02d}"
        if i % 9 == 3:
            rows.append(skipped(sid, "m", "missing required artifact(s) generated_video", category="missing video"))
        elif i % 11 == 5:
            rows.append(errored(sid, "m", ZeroDivisionError("bug")))
        elif i % 13 == 7:
            rows.append(scored(sid, "m", 0.0, passed=False, diagnostics={"penalised": True}))
        elif i % 7 == 1:
            rows.append(scored(sid, "m", True))  # a bool raw value counts as 1.0
        else:
            rows.append(scored(sid, "m", (i * 37 % 17) / 3.0 + 1e-9 * i))
    rows.append(MetricResult(sample_id="s40", metric_id="m", raw_value="text", normalized_value=None))
    return rows


@pytest.mark.parametrize("aggregator,statistics,ci", [
    ("mean", ("mean", "std", "min", "max"), "auto"),
    ("median", ("median", "p5", "p95"), "bootstrap"),
    ("mean", ("mean",), "none"),
])
def test_the_columns_of_rows_aggregate_exactly_as_the_rows(aggregator, statistics, ci):
    rows = _rows()
    options = dict(aggregator=aggregator, statistics=statistics, ci=ci, seed=3, bounds=(0.0, None))
    from_rows = default_aggregate("m", rows, **options)
    from_columns = default_aggregate("m", OutcomeColumns.of(rows), **options)
    assert json.dumps(from_rows.to_dict()) == json.dumps(from_columns.to_dict())
    assert from_rows.skip_breakdown == {"missing video": 5, "error: ZeroDivisionError": 4}
    assert from_rows.diagnostics["penalised"] == 3
    picked = [0, 5, 7, 12, 33]
    assert default_aggregate("m", OutcomeColumns.of(rows).take(picked), **options) == \
        default_aggregate("m", [rows[i] for i in picked], **options)


def test_a_nan_value_is_a_value_never_a_missing_one():
    rows = [scored("a", "m", 1.0), scored("b", "m", float("nan"))]
    columns = OutcomeColumns.of(rows)
    assert len(columns.values("norm")) == 2 and math.isnan(columns.values("norm")[1])


class _Pooled(BaseMetric):
    name = "pooled"

    def compute_sample(self, request, result):  # pragma: no cover - not scored here
        raise NotImplementedError

    def aggregate(self, results):
        return AggregateResult(metric_id=self.name, n_total=len(results),
                               diagnostics={"ids": [r.sample_id for r in results]})


def test_a_streamed_table_gives_the_document_of_the_lists(tmp_path):
    requests = [GenerationRequest(sample_id=f"s{i:02d}", split="test" if i % 3 else "val", metadata={"level": i % 4})
                for i in range(41)]
    rows = _rows()
    pooled = [scored(r.sample_id, "pooled", i) for i, r in enumerate(requests)]
    metrics = {"m": _Simple(), "pooled": _Pooled()}
    rules = {"group_by": ["split", "metadata.level"]}
    manifest = {"run_id": "r", "config_hash": "c", "model": {"name": "x"},
                "benchmark": {"id": "b", "dataset_hash": dataset_hash(requests)}}
    _, expected = build_results(manifest=manifest, metrics=metrics, per_metric={"m": rows, "pooled": pooled},
                                requests=requests, rules=rules)
    table = ResultTable(metrics, {}, rules["group_by"], rows_file=tmp_path / "metrics.jsonl")
    with JsonlWriter(tmp_path / "metrics.jsonl") as out:
        for start in range(0, 41, 6):  # in chunks, the custom aggregate's rows written and read back lazily
            chunk = slice(start, start + 6)
            offsets = {"pooled": [out.write(r.to_dict()) for r in pooled[chunk]]}
            out.flush()
            table.add(requests[chunk], {"m": rows[chunk], "pooled": pooled[chunk]}, offsets)
    _, streamed = build_results(manifest=manifest, metrics=metrics, table=table, rules=rules)
    assert json.dumps(streamed.to_dict()) == json.dumps(expected.to_dict())
    assert streamed.slices["b.pooled"]["split=val"].diagnostics["ids"] == [f"s{i:02d}" for i in range(0, 41, 3)]


class _Simple(BaseMetric):
    name = "m"

    def compute_sample(self, request, result):  # pragma: no cover - not scored here
        raise NotImplementedError


def test_the_dataset_hash_fed_one_request_at_a_time_is_the_hash_of_the_list():
    requests = [GenerationRequest(sample_id=f"s{i}", controls={"actions": [i, 2]}, prompt="é") for i in range(5)]
    digest = DatasetHash()
    for request in requests:
        digest.add(request)
    assert digest.hexdigest() == dataset_hash(requests) == dataset_hash(iter(requests))
    assert DatasetHash().hexdigest() == dataset_hash([])


def test_the_result_cache_key_built_once_per_sample_is_the_documented_key():
    ref = ArtifactRef(kind="video", uri="/s/a.npy", sha256="a" * 64)
    request = GenerationRequest(sample_id="s", references={"video": ref}, metadata={"note": "ü \"quoted\""})
    result = GenerationResult(sample_id="s", artifacts={"generated_video": ref}, latency_seconds=0.25)
    identity = {"class": "x.Y", "config": {"k": [1, 2.5, None]}}
    digest, key = ResultCache("/unused").key(identity, "psnr", request, result)
    assert ResultCache.key_of(digest, "psnr", ResultCache.sample_part(request, result)) == key


def test_spooled_requests_come_back_equal_with_their_value_types(tmp_path):
    requests = [GenerationRequest(sample_id=f"s{i}", metadata={"n": np.int64(i), "x": [1.5, None]}) for i in range(9)]
    spool = request_spool(tmp_path)
    for request in requests:
        spool.append(request)
    spool.append(GenerationRequest(sample_id="lambda", metadata={"f": lambda: 1}))  # cannot be pickled: held
    assert len(spool) == 10 and not list(tmp_path.iterdir())  # an unlinked file: nothing left behind
    back = list(spool)
    assert back[:9] == requests and type(back[4].metadata["n"]) is np.int64
    assert back[9].metadata["f"]() == 1
    assert [len(c) for c in spool.chunks(4)] == [4, 4, 2] and spool[-2] == requests[8]
    spool.apply = lambda r: r.sample_id
    assert spool[3] == "s3"
    spool.close()


def test_generation_records_keep_numbers_numbers_and_read_back_as_scoring_reads_them(tmp_path):
    """A live run scores the records it wrote to generations.jsonl, as a re-score does: one format.
    A numpy number in a request's metadata is written as a number, not as its text."""
    request = GenerationRequest(sample_id="s0", metadata={"n": np.int64(4), "x": np.float32(1.5),
                                                          "v": np.arange(3), "ok": np.bool_(True)})
    path = tmp_path / "generations.jsonl"
    with JsonlWriter(path, truncate=True) as out:
        offsets = [out.write({"request": request.to_dict(), "result": GenerationResult(sample_id="s0").to_dict()})]
    ((back, result),) = [p for chunk in stored_pairs(path, offsets).chunks(8) for p in chunk]
    assert back.metadata == {"n": 4, "x": 1.5, "v": (0, 1, 2), "ok": True} and type(back.metadata["n"]) is int
    assert result.sample_id == "s0"


def test_a_torn_last_line_stays_one_unreadable_line(tmp_path):
    path = tmp_path / "rows.jsonl"
    path.write_text('{"a": 1}\n{"b": 2')  # a writer killed mid-line
    with JsonlWriter(path) as out:
        out.write({"c": 3})
    assert list(read_jsonl(path)) == [{"a": 1}, {"c": 3}]
    with JsonlWriter(tmp_path / "never.jsonl"):
        pass
    assert not (tmp_path / "never.jsonl").exists()
