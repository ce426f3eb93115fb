"""Scoring, in one place: every metric over every stored generation, each (metric, sample) isolated.

A metric that raises on one item records ``error`` (traceback in diagnostics) and the run goes
on; an item without the metric's required artifacts is a ``skip`` with the reason. For each
(metric, sample), in order: a row a resumed run keeps (:class:`Reuse`), else the store's cached row
(:class:`~wfeval.storage.metric_rows.ResultCache`), else the metric computes it. The misses are
scored in blocks of samples: a reader thread decodes (and verifies) the arrays of the next block
while the current one is scored, every metric of a block reads each array once
(:func:`wfeval.storage.artifacts.preloaded`), and a metric with a ``prepare(pairs)`` method (FVD:
the block's clips share I3D forward passes) gets the block first.
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from typing import Any, Callable, Iterable, Mapping, Sequence

from wfeval.api import GenerationRequest, GenerationResult, MetricResult
from wfeval.benchmarks.base import INPUT_ERROR
from wfeval.metrics.outcomes import errored, scored, skipped
from wfeval.pipeline.failure import storage_fault, user_exit
from wfeval.stats import check_bounds
from wfeval.storage.artifacts import ArtifactError, preloaded, read_array
from wfeval.storage.metric_rows import ResultCache, identity_value, metric_digest, metric_identity
from wfeval.results.record import ManifestMetric, RunManifest
from wfeval.storage.rundir import FILES, RunDirectory, line_offsets, request_sample_id
from wfeval.storage.safe_io import open_nofollow
from wfeval.utils.hashing import sha256_json

BLOCK = 8  # samples per block: bounds the arrays held (two blocks at a time)


def _missing_reason(missing: list[str], result: GenerationResult) -> str:
    reason = f"missing required artifact(s) {', '.join(missing)}"
    if result.status != "ok":
        reason += f" (generation {result.status}" + (f": {result.error})" if result.error else ")")
    return reason


class Reuse:
    """Metric rows a resumed run keeps: those of samples whose generation is the one they scored
    (the same ``generations.jsonl`` record before and now), for metrics whose version did not
    change (version and identity: code, options, callables). Only their places in ``metrics.jsonl`` are held; :meth:`rows` reads a chunk's rows.

    Every other row is dropped from ``metrics.jsonl`` before the new ``generations.jsonl`` takes
    its place: a row is valid only against the generation records it was checked against, and a
    later resume compares against the new records (a row of a replaced generation left in the
    file would look current to it if this attempt died before rescoring that sample)."""

    def __init__(self, rundir: RunDirectory, metrics: Mapping[str, Any], records: Path,
                 previous_manifest: RunManifest):
        before = {sample_id: sha256_json(row) for _, row in line_offsets(rundir.file(FILES.generations))
                  if isinstance(sample_id := request_sample_id(row), str)}  # a malformed old record: rescored
        unchanged = {sample_id for _, row in line_offsets(records)
                     if isinstance(sample_id := request_sample_id(row), str) and before.get(sample_id) == sha256_json(row)}
        del before
        before = {m: v.to_dict() for m, v in (previous_manifest.metrics or {}).items() if isinstance(v, ManifestMetric)}
        current = {m for m, metric in metrics.items() if m in before and _same_metric(before[m], metric)}
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
        with self.path.open("rb") as old, open_nofollow(temporary, "wb") as new:
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


def _same_metric(recorded: Mapping[str, Any], metric: Any) -> bool:
    """A metric whose rows a resumed run may keep: the same version and, where the run recorded it,
    the same identity (its code, options and callables: :func:`~wfeval.storage.metric_rows.metric_digest`)."""
    if recorded.get("version") != str(metric.version):
        return False
    return "identity" not in recorded or recorded["identity"] == metric_digest(metric)


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
    except SystemExit as exc:
        raise user_exit(exc, f"metric {metric_id!r} (scoring sample {request.sample_id!r})") from None
    except Exception as exc:
        fault = storage_fault(exc)  # a corrupt stored object, a full disk: the run's, never this sample's
        if fault is not None:
            raise fault from exc
        return errored(request.sample_id, metric_id, exc)
    if out.metric_id != metric_id or out.sample_id != request.sample_id:
        out = dataclasses.replace(out, metric_id=metric_id, sample_id=request.sample_id)
    problem = bad_value(metric, out)
    if problem:  # a value no mean may take in: this sample's row says why, the others are scored
        return errored(request.sample_id, metric_id, ValueError(f"metric {metric_id!r} {problem}"))
    return out


def bad_value(metric: Any, row: MetricResult) -> str | None:
    """Why a scored row's value cannot be aggregated, or None: not a number (a set-level metric's
    ``ok`` row without a value, FVD's, is fine), not finite, or outside the metric's declared range
    (beyond rounding: 1e-6 of the range)."""
    if row.status not in ("ok", "fail"):
        return None
    value = row.normalized_value if row.normalized_value is not None else row.raw_value
    if value is None or isinstance(value, bool):
        return None
    if not isinstance(value, (int, float)) or isinstance(value, complex):
        return f"returned {type(value).__name__} {str(value)[:80]!r} for sample {row.sample_id!r}, not a number"
    if not math.isfinite(value):
        return f"returned {value!r} for sample {row.sample_id!r}: values must be finite"
    try:
        low, high = check_bounds(getattr(metric, "bounds", None))
    except (TypeError, ValueError):
        return None
    slack = 1e-6 * max(1.0, abs(low or 0.0), abs(high or 0.0))
    if (low is not None and value < low - slack) or (high is not None and value > high + slack):
        span = f"[{'-inf' if low is None else f'{low:g}'}, {'inf' if high is None else f'{high:g}'}]"
        return f"returned {value:g} for sample {row.sample_id!r}, outside its declared range {span}"
    return None


def _refs(request: GenerationRequest, result: GenerationResult) -> Iterable[Any]:
    yield from request.references.values()
    yield from result.artifacts.values()


def _read_block(block: Sequence[tuple[GenerationRequest, GenerationResult]]) -> dict[str, Any]:
    """The verified arrays of a block's references and outputs, by content hash (unreadable: left out)."""
    arrays: dict[str, Any] = {}
    for request, result in block:
        for ref in _refs(request, result):
            if ref.sha256 and ref.sha256 not in arrays:
                try:
                    arrays[ref.sha256] = read_array(ref)
                except (ArtifactError, ValueError):
                    pass  # the metric reads it itself and reports the problem on its sample
    return arrays


def _score_blocks(
    metrics: Mapping[str, Any],
    pairs: Sequence[tuple[GenerationRequest, GenerationResult]],
    *,
    done: Mapping[tuple[str, str], MetricResult],
    on_result: Callable[[MetricResult, bool], None],
    score_one: Callable[[str, Any, GenerationRequest, GenerationResult], MetricResult],
    cache: ResultCache | None = None,
    block: int = BLOCK,
    variants: Mapping[str, Any] | None = None,
    recompute: Iterable[str] = (),
) -> dict[str, list[MetricResult]]:
    """Per metric id, one row per pair in pair order; ``done`` rows (a resumed run) are reused as
    they are (``on_result(row, True)``), cached rows are new rows of this run (``on_result(row, False)``).
    ``variants``: per metric id, what else changes its rows (the core's ``on_failure``); ``recompute``:
    metric ids whose cached rows are not served (their new rows are cached)."""
    recompute = frozenset(recompute)
    rows: dict[str, list[MetricResult | None]] = {m: [None] * len(pairs) for m in metrics}
    keys: dict[tuple[str, int], tuple[str, str]] = {}
    todo: list[list[str]] = [[] for _ in pairs]  # metric ids to compute, per pair
    parts: list[str | None] = [None] * len(pairs)  # each sample's share of its cache keys
    for metric_id, metric in metrics.items():
        identity = metric_identity(metric) if cache is not None else None
        if identity is not None and variants and variants.get(metric_id):  # e.g. on_failure: changes rows
            identity = {**identity, "variant": identity_value(variants[metric_id])}
        digest = sha256_json(identity) if identity is not None else ""
        for i, (request, result) in enumerate(pairs):
            previous = done.get((metric_id, request.sample_id))
            if previous is not None:
                rows[metric_id][i] = previous
                on_result(previous, True)
                continue
            if identity is not None:
                if parts[i] is None:
                    parts[i] = cache.sample_part(request, result)
                keys[(metric_id, i)] = digest, cache.key_of(digest, metric_id, parts[i])
                hit = cache.get(*keys[(metric_id, i)]) if metric_id not in recompute else None
                if hit is not None:
                    if hit.metric_id != metric_id or hit.sample_id != request.sample_id:
                        hit = MetricResult.from_dict({**hit.to_dict(), "metric_id": metric_id,
                                                      "sample_id": request.sample_id})
                    rows[metric_id][i] = hit
                    cache.hits += 1
                    on_result(hit, False)
                    continue
                cache.misses += 1
            todo[i].append(metric_id)
    blocks = [idx for idx in (list(range(s, min(s + block, len(pairs)))) for s in range(0, len(pairs), block))
              if any(todo[i] for i in idx)]
    with ThreadPoolExecutor(1, thread_name_prefix="wfeval-reader") as reader:
        ahead: Future | None = reader.submit(_read_block, [pairs[i] for i in blocks[0]]) if blocks else None
        for n, idx in enumerate(blocks):
            arrays = ahead.result() if ahead is not None else {}
            ahead = reader.submit(_read_block, [pairs[i] for i in blocks[n + 1]]) if n + 1 < len(blocks) else None
            with preloaded(arrays):
                for metric_id, metric in metrics.items():
                    mine = [i for i in idx if metric_id in todo[i]]
                    prepare = getattr(metric, "prepare", None)
                    if mine and callable(prepare):
                        try:
                            prepare([pairs[i] for i in mine])
                        except Exception:  # best effort: compute_sample reports problems per sample
                            pass
                    for i in mine:
                        request, result = pairs[i]
                        row = score_one(metric_id, metric, request, result)
                        rows[metric_id][i] = row
                        if (metric_id, i) in keys:
                            cache.put(*keys[(metric_id, i)], row)
                        on_result(row, False)
            del arrays
    return {m: [r for r in rs if r is not None] for m, rs in rows.items()}


def score_all(
    metrics: Mapping[str, Any],
    pairs: Sequence[tuple[GenerationRequest, GenerationResult]],
    *,
    done: Mapping[tuple[str, str], MetricResult],
    on_result: Callable[[MetricResult, bool], None],
    cache: Any = None,
    recompute: Iterable[str] = (),
) -> dict[str, list[MetricResult]]:
    """Per metric id, one result per pair (reusing ``done[(metric_id, sample_id)]``, then the
    store's metric-result ``cache``, except for the ``recompute`` ids); a :class:`~wfeval.results.MetricSet`
    also says what a failed generation does to each metric (``on_failure``, part of the cached rows' identity)."""
    on_failure = getattr(metrics, "on_failure", {})

    def one(metric_id: str, metric: Any, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        return score_one(metric_id, metric, request, result, on_failure.get(metric_id, "exclude"))

    return _score_blocks(metrics, pairs, done=done, on_result=on_result, score_one=one, cache=cache,
                         variants={m: {"on_failure": on_failure.get(m, "exclude")} for m in metrics},
                         recompute=recompute)
