"""Scoring: every metric over every stored generation, each (metric, sample) isolated.

A metric that raises on one item records ``error`` (traceback in diagnostics) and the run goes
on; an item without the metric's required artifacts is a ``skip`` with the reason.
"""

from __future__ import annotations

import dataclasses
import json
import os
from pathlib import Path
from typing import Any, Callable, Mapping, Sequence

from wfeval.api import GenerationRequest, GenerationResult, MetricResult
from wfeval.benchmarks.base import INPUT_ERROR
from wfeval.metrics.outcomes import errored, scored, skipped
from wfeval.storage.rundir import FILES, RunDirectory, line_offsets, request_sample_id
from wfeval.utils.hashing import sha256_json


def _missing_reason(missing: list[str], result: GenerationResult) -> str:
    reason = f"missing required artifact(s) {', '.join(missing)}"
    if result.status != "ok":
        reason += f" (generation {result.status}" + (f": {result.error})" if result.error else ")")
    return reason


class Reuse:
    """Metric rows a resumed run keeps: those of samples whose generation is the one they scored
    (the same ``generations.jsonl`` record before and now), for metrics whose version did not
    change. Only their places in ``metrics.jsonl`` are held; :meth:`rows` reads a chunk's rows.

    Every other row is dropped from ``metrics.jsonl`` before the new ``generations.jsonl`` takes
    its place: a row is valid only against the generation records it was checked against, and a
    later resume compares against the new records (a row of a replaced generation left in the
    file would look current to it if this attempt died before rescoring that sample)."""

    def __init__(self, rundir: RunDirectory, metrics: Mapping[str, Any], records: Path,
                 previous_manifest: Mapping[str, Any]):
        before = {sample_id: sha256_json(row) for _, row in line_offsets(rundir.file(FILES.generations))
                  if isinstance(sample_id := request_sample_id(row), str)}  # a malformed old record: rescored
        unchanged = {sample_id for _, row in line_offsets(records)
                     if isinstance(sample_id := request_sample_id(row), str) and before.get(sample_id) == sha256_json(row)}
        del before
        versions_before = {m: v.get("version") for m, v in previous_manifest.get("metrics", {}).items()}
        current = {m for m, metric in metrics.items() if versions_before.get(m) == str(metric.version)}
        self.path, self.metric_ids = rundir.file(FILES.metrics), sorted(current)
        self.offsets: dict[tuple[str, str], int] = {}  # (metric id, sample id) -> its latest row
        rows = 0
        for offset, row in line_offsets(self.path):
            rows += 1
            if row.get("metric_id") in current and row.get("sample_id") in unchanged:
                self.offsets[(row["metric_id"], row["sample_id"])] = offset
        if rows > len(self.offsets):
            self._keep_only_reused()

    def _keep_only_reused(self) -> None:
        """Rewrite ``metrics.jsonl`` with the reused rows alone (in file order), atomically, one
        row at a time; the offsets then point into the new file."""
        temporary = self.path.with_name(f".{self.path.name}.compact")
        kept = sorted(self.offsets.items(), key=lambda item: item[1])
        offsets: dict[tuple[str, str], int] = {}
        with self.path.open("rb") as old, temporary.open("wb") as new:
            for key, offset in kept:
                old.seek(offset)
                offsets[key] = new.tell()
                line = old.readline()
                new.write(line if line.endswith(b"\n") else line + b"\n")
            new.flush()
            os.fsync(new.fileno())
        os.replace(temporary, self.path)
        self.offsets = offsets

    def __len__(self) -> int:
        return len(self.offsets)

    def rows(self, pairs: Sequence[tuple[GenerationRequest, GenerationResult]]
             ) -> dict[tuple[str, str], MetricResult]:
        found = {}
        keys = [(m, q.sample_id) for q, _ in pairs for m in self.metric_ids if (m, q.sample_id) in self.offsets]
        if not keys:
            return found
        with self.path.open("rb") as handle:
            for key in sorted(keys, key=self.offsets.__getitem__):
                handle.seek(self.offsets[key])
                found[key] = MetricResult.from_dict(json.loads(handle.readline()))
        return found


def _penalised(metric_id: str, metric: Any, request: GenerationRequest, result: GenerationResult) -> MetricResult:
    """A failed generation scored at the metric's worst value (``metric.<id>.on_failure=worst``)."""
    from wfeval.metrics.base import worst_value

    worst = worst_value(metric)
    return scored(request.sample_id, metric_id, worst, passed=False,
                  diagnostics={"penalised": True, "on_failure": "worst", "generation_status": result.status,
                               "generation_error": result.error})


def score_one(metric_id: str, metric: Any, request: GenerationRequest, result: GenerationResult,
              on_failure: str = "exclude") -> MetricResult:
    if result.stop_reason == INPUT_ERROR:  # the benchmark could not provide the inputs: not the model's fault
        return skipped(request.sample_id, metric_id, "input unavailable (benchmark data problem)",
                       category="input unavailable (benchmark data problem)", input_error=result.error)
    missing = [k for k in getattr(metric, "required_artifacts", ()) if k not in result.artifacts]
    if missing and result.status != "ok" and on_failure == "worst":
        return _penalised(metric_id, metric, request, result)
    if missing:
        category = f"missing required artifact(s) {', '.join(missing)}" + \
            (f" (generation {result.status})" if result.status != "ok" else "")
        return skipped(request.sample_id, metric_id, _missing_reason(missing, result), category=category)
    try:
        out = metric.compute_sample(request, result)
        if not isinstance(out, MetricResult):
            raise TypeError(f"compute_sample returned {type(out).__name__}, expected MetricResult")
    except Exception as exc:
        return errored(request.sample_id, metric_id, exc)
    if out.metric_id != metric_id or out.sample_id != request.sample_id:
        out = dataclasses.replace(out, metric_id=metric_id, sample_id=request.sample_id)
    return out


def score_all(
    metrics: Mapping[str, Any],
    pairs: Sequence[tuple[GenerationRequest, GenerationResult]],
    *,
    done: Mapping[tuple[str, str], MetricResult],
    on_result: Callable[[MetricResult, bool], None],
    cache: Any = None,
) -> dict[str, list[MetricResult]]:
    """Per metric id, one result per pair (reusing ``done[(metric_id, sample_id)]``, then the
    store's metric-result ``cache``; arrays read ahead: :mod:`wfeval.storage.metric_rows`); a
    :class:`~wfeval.results.MetricSet` also says what a failed generation does to each metric."""
    from wfeval.storage.metric_rows import score_metrics

    on_failure = getattr(metrics, "on_failure", {})

    def one(metric_id: str, metric: Any, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        return score_one(metric_id, metric, request, result, on_failure.get(metric_id, "exclude"))

    return score_metrics(metrics, pairs, done=done, on_result=on_result, score_one=one, cache=cache,
                         variants={m: {"on_failure": on_failure.get(m, "exclude")} for m in metrics})
