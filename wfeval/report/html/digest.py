"""What the report keeps of a run's row files, read as streams: bounded state or compact columns.

* ``samples.jsonl``: the first ``MAX_SAMPLE_ROWS`` sample ids and their generation status, the row
  count, and the failed generations grouped by reason (per group its count and ``MAX_IDS``
  smallest ids) — bounded.
* ``metrics.jsonl``: per metric a :class:`~.columns.MetricRows` (about 40 bytes a sample) and a
  :class:`~.curves.Horizon` (a few numbers per frame); rows of a sample after its first one
  (a resumed run) are resolved by :meth:`~.columns.MetricRows.finish` and, for the curves, by
  reading the file again.
* ``generations.jsonl``: only when ``samples.jsonl`` has no row (the failures and the sample ids
  then come from here); the records of the samples the page shows are read again when it shows them.
* ``steps.jsonl``: the timed rows' step and latency (16 bytes a row), what the latency chart sorts.
"""

from __future__ import annotations

from typing import Any, Iterable

import numpy as np

from wfeval.report.html.columns import Codes, Column, IdColumn, MetricRows, decode
from wfeval.report.html.curves import Horizon
from wfeval.report.html.values import status_of
from wfeval.report.numbers import number
from wfeval.storage import rundir

MAX_SAMPLE_ROWS = 2000
MAX_IDS = 12
SCORED = ("ok", "fail")


class Groups:
    """Failures by (where, status, reason): the count and the ``MAX_IDS`` smallest ids of each."""

    def __init__(self) -> None:
        self.groups: dict[tuple, list] = {}

    def add(self, key: tuple, sample_id: Any) -> None:
        group = self.groups.setdefault(key, [0, []])
        group[0] += 1
        group[1].append(sample_id)
        if len(group[1]) >= 4 * MAX_IDS:
            group[1].sort()
            del group[1][MAX_IDS:]

    def items(self) -> list[tuple[tuple, int, list]]:
        return [(key, count, sorted(ids)[:MAX_IDS]) for key, (count, ids) in self.groups.items()]


class Samples:
    """``samples.jsonl``: the sample table's ids and statuses, the row count, failed generations."""

    def __init__(self, rows: Iterable[dict[str, Any]]):
        self.has_rows, self.count = False, 0
        self.ids: list[Any] = []  # the first MAX_SAMPLE_ROWS rows' ids, as the table lists them
        self.status: dict[Any, str] = {}  # their generation status (the last row of the id wins)
        self.failures = Groups()
        for row in rows:
            self.has_rows = True
            sample_id = row["sample_id"]
            if self.count < MAX_SAMPLE_ROWS:
                self.ids.append(sample_id)
                self.status[sample_id] = row.get("stop_reason") or ""
            elif sample_id in self.status:
                self.status[sample_id] = row.get("stop_reason") or ""
            self.count += 1
            if not row.get("success", True):
                reason = ((row.get("metadata") or {}).get("generation_error") or row.get("stop_reason") or "")
                self.failures.add(("generation", row.get("stop_reason") or "failed", str(reason)), sample_id)


class Generations:
    """``generations.jsonl`` where ``samples.jsonl`` has no row: failed generations (the last record
    of a sample wins) and the sample ids in the order they first appear."""

    def __init__(self, rows: Iterable[dict[str, Any]]):
        failing: dict[str, tuple] = {}
        ids = IdColumn()
        for record in rows:
            sample = rundir.request_sample_id(record)
            if not sample:
                continue
            sample_id = str(sample)
            ids.append(sample_id)
            result = record.get("result") or {}
            if result.get("status", "ok") != "ok":
                failing[sample_id] = ("generation", result.get("stop_reason") or result["status"],
                                      str(result.get("error") or ""))
            else:
                failing.pop(sample_id, None)
        self.failures = Groups()
        for sample_id, key in failing.items():
            self.failures.add(key, sample_id)
        unique, first = np.unique(ids.values, return_index=True)
        self.count = len(unique)
        self.ids = [decode(raw) for raw in ids.values[np.sort(first)[:MAX_SAMPLE_ROWS]]]


def read_metrics(rows: Iterable[dict[str, Any]]) -> tuple[dict[str, MetricRows], dict[str, Horizon]]:
    """Per metric (in the order metrics first appear) its rows and its horizon curve.

    ``rows`` is read once, again for the curves' squared distances when a curve has two values at
    some frame, and twice more when a metric with curves has samples with several rows.
    """
    statuses, reasons = Codes(), Codes()
    metrics: dict[str, MetricRows] = {}
    horizons: dict[str, Horizon] = {}
    for row in rows:
        metric, sample = row.get("metric_id"), row.get("sample_id")
        if not (metric and sample):
            continue
        if str(metric) not in metrics:
            metrics[str(metric)], horizons[str(metric)] = MetricRows(statuses, reasons), Horizon()
        if metrics[str(metric)].add(str(sample), row) in SCORED:
            horizons[str(metric)].add(row)
    repeated = {m: ids for m, table in metrics.items() if (ids := table.finish())}
    redo = {m: ids for m, ids in repeated.items() if horizons[m].component is not None}
    winners: dict[tuple[str, str], dict[str, Any]] = {}
    if redo:  # rows in the order their samples first appear, each sample's last row in that place
        for metric, sample, row in _keyed(rows):
            if sample in redo.get(metric, ()):
                winners[(metric, sample)] = row
        for metric in redo:
            horizons[metric] = Horizon()
        for metric, row in _first_places(rows, redo, winners):
            if status_of(row) in SCORED:
                horizons[metric].add(row)
    squares = {m: repeated.get(m, set()) for m, horizon in horizons.items() if horizon.needs_squares}
    if squares:
        for metric, row in _first_places(rows, squares, winners):
            if status_of(row) in SCORED:
                horizons[metric].add_square(row)
    return metrics, horizons


def _keyed(rows: Iterable[dict[str, Any]]):
    for row in rows:
        metric, sample = row.get("metric_id"), row.get("sample_id")
        if metric and sample:
            yield str(metric), str(sample), row


def _first_places(rows, only: dict[str, set[str]], winners: dict[tuple[str, str], dict[str, Any]]):
    """(metric, row) of the metrics in ``only``, one per sample: a repeated sample's last row
    (``winners``) in the place of its first."""
    placed: set[tuple[str, str]] = set()
    for metric, sample, row in _keyed(rows):
        if metric not in only:
            continue
        if sample in only[metric]:
            if (metric, sample) in placed:
                continue
            placed.add((metric, sample))
            row = winners[(metric, sample)]
        yield metric, row


class Steps:
    """The timed rows of ``steps.jsonl`` (integer step, a latency, not cached); only the
    ``phase: "step"`` rows once the file has one (a step-wise run's per-call rows)."""

    def __init__(self, rows: Iterable[dict[str, Any]]):
        self.step, self.latency = Column(np.int64), Column(np.float64)
        stepwise = False
        for row in rows:
            if row.get("phase") != "step":
                if stepwise:
                    continue
            elif not stepwise:  # the first step row: the rows kept so far were not step rows
                stepwise, self.step.n, self.latency.n = True, 0, 0
            step, latency = row.get("step"), number(row.get("latency_seconds"))
            if (isinstance(step, int) and not isinstance(step, bool) and -2**63 <= step < 2**63  # an int64 column
                    and latency is not None and not row.get("cached")):
                self.step.append(step)
                self.latency.append(latency)

    def by_step(self) -> tuple[list[tuple[int, np.ndarray]], np.ndarray]:
        """Per step (ascending) its latencies sorted, and every latency sorted (ties in step, then file order)."""
        steps, latency = self.step.values, self.latency.values
        order = np.argsort(steps, kind="stable")
        steps, latency = steps[order], latency[order]
        starts = np.flatnonzero(np.append(True, steps[1:] != steps[:-1])) if len(steps) else np.array([], int)
        ends = np.append(starts[1:], len(steps))
        groups = [(int(steps[a]), np.sort(latency[a:b], kind="stable")) for a, b in zip(starts, ends)]
        return groups, np.sort(latency, kind="stable")
