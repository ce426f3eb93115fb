"""What results need of every sample, kept compact while a run streams its samples.

A run scores its samples chunk by chunk and writes each row to ``metrics.jsonl`` as it goes; a
:class:`ResultTable` keeps, per sample, only what aggregation, group slices and the evidence gate
read: for a metric aggregated by the default method its
:class:`~wfeval.metrics.outcome_columns.OutcomeColumns` (status, values, skip category), for a metric
with its own ``aggregate`` (FVD, step latency) its rows — the objects when they are in memory
already (:meth:`of_rows`), else their byte offsets in ``metrics.jsonl``, read back lazily when the
metric aggregates (a run, replay, merge) — plus the group value of each ``group_by`` key and the splits.

:func:`ResultTable.of_rows` builds the same table from lists of rows, so every path to
results.json (a run, ``run.from_run``, replay, merge, resume) aggregates through the same code.
"""

from __future__ import annotations

from array import array
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from wfeval.api import AggregateResult, GenerationRequest, MetricResult
from wfeval.metrics.outcome_columns import OutcomeColumns
from wfeval.results.aggregation import Aggregation, aggregate_metric, declared_aggregation
from wfeval.results.slices import group_value
from wfeval.storage.rundir import JsonlRows


class ResultTable:
    def __init__(self, metrics: Mapping[str, Any], aggregation: Mapping[str, Aggregation | None] | None = None,
                 group_by: Sequence[str] = (), rows_file: Path | None = None, metric_ids: Sequence[str] | None = None):
        self.metrics = metrics
        self.aggregation = dict(aggregation or {})
        self.rows_file = rows_file  # where the offsets of custom-aggregate rows point (metrics.jsonl)
        self.ids = list(metric_ids if metric_ids is not None else metrics)  # the metrics' order
        self.columns: dict[str, OutcomeColumns] = {}
        self.rows: dict[str, Any] = {}
        for m in self.ids:
            if self.aggregation.get(m) is not None or declared_aggregation(metrics[m]) is not None:
                self.columns[m] = OutcomeColumns()
            else:
                self.rows[m] = array("q") if rows_file is not None else []
        self.group_by = tuple(group_by)
        self.codes = {m: {key: array("i") for key in self.group_by} for m in self.ids}
        self.values: dict[str, dict[str, int]] = {key: {} for key in self.group_by}  # group text -> code
        self.splits: set[str] = set()
        self.problem: Exception | None = None  # an unknown group_by key: raised when slices are built

    @classmethod
    def of_rows(cls, metrics: Mapping[str, Any], per_metric: Mapping[str, Sequence[MetricResult]],
                requests: Sequence[GenerationRequest], group_by: Sequence[str] = (),
                aggregation: Mapping[str, Aggregation | None] | None = None) -> "ResultTable":
        table = cls(metrics, aggregation, group_by, metric_ids=list(per_metric))
        table.splits.update(r.split for r in requests)
        by_id = {r.sample_id: r for r in requests}
        for m, rows in per_metric.items():
            table._add_rows(m, rows, [r.sample_id for r in rows], by_id)
        return table

    def add(self, requests: Sequence[GenerationRequest], per_metric: Mapping[str, Sequence[MetricResult]],
            offsets: Mapping[str, Sequence[int]] | None = None) -> None:
        """One chunk: its requests and, per metric, their rows in the same order (and, with a
        ``rows_file``, the byte offsets of the custom-aggregate metrics' rows in it)."""
        self.splits.update(r.split for r in requests)
        by_id = {r.sample_id: r for r in requests}
        for m, rows in per_metric.items():
            self._add_rows(m, rows, [r.sample_id for r in rows], by_id, (offsets or {}).get(m))

    def _add_rows(self, m: str, rows: Sequence[MetricResult], ids: list[str],
                  by_id: Mapping[str, GenerationRequest], offsets: Sequence[int] | None = None) -> None:
        if m in self.columns:
            for row in rows:
                self.columns[m].add(row)
        else:
            self.rows[m].extend(offsets if self.rows_file is not None else rows)
        for key in self.group_by:
            if self.problem is not None:
                break
            codes, values = self.codes[m][key], self.values[key]
            try:
                for sample_id in ids:
                    text = group_value(by_id[sample_id], key)
                    code = values.get(text)
                    codes.append(len(values) if code is None else code)
                    if code is None:
                        values[text] = len(values)
            except (ValueError, KeyError) as exc:
                self.problem = exc

    def rows_of(self, m: str) -> Sequence[MetricResult]:
        rows = self.rows[m]
        return JsonlRows(self.rows_file, rows, MetricResult.from_dict) if self.rows_file is not None else rows

    def aggregate(self, m: str, indices: Sequence[int] | None = None) -> AggregateResult:
        """Metric ``m``'s aggregate over all its rows, or over the rows at ``indices``."""
        if m in self.columns:
            data: Any = self.columns[m] if indices is None else self.columns[m].take(indices)
        else:
            data = self.rows_of(m)
            if indices is not None:
                data = data.take(indices) if isinstance(data, JsonlRows) else [data[i] for i in indices]
        return aggregate_metric(m, self.metrics[m], data, self.aggregation.get(m))

    def slices(self) -> dict[str, dict]:
        """Per metric, per ``key=value`` group (sorted by value): the metric's aggregate over that group."""
        out: dict[str, dict] = {}
        for m in self.ids:
            out[m] = {}
            if self.group_by and self.problem is not None and self._count(m):
                raise self.problem
            for key in self.group_by:
                codes = np.frombuffer(self.codes[m][key], dtype=np.int32)
                for text, code in sorted(self.values[key].items()):
                    indices = np.flatnonzero(codes == code)
                    if indices.size:
                        out[m][f"{key}={text}"] = self.aggregate(m, indices.tolist()).to_dict()
        return out

    def _count(self, m: str) -> int:
        return len(self.columns[m]) if m in self.columns else len(self.rows[m])
