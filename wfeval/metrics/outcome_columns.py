"""What the default aggregation reads of each per-sample row, kept as compact columns.

:func:`wfeval.metrics.base.default_aggregate` needs, per row, only its status, its numeric raw
value, its normalized value, whether it was penalised and (for a skip or an error) the category
of its reason. :class:`OutcomeColumns` holds exactly that in flat arrays (about 30 bytes a
sample instead of a :class:`~wfeval.api.MetricResult` of a few KB), so a run can stream its rows
to ``metrics.jsonl`` and still aggregate them; :meth:`OutcomeColumns.of` builds the columns of a
list of rows, and the aggregate of either is computed by the one same function.
"""

from __future__ import annotations

from array import array
from typing import Any, Iterable, Sequence

import numpy as np

from wfeval.api import MetricResult
from wfeval.metrics.outcomes import reason_category

STATUSES = ("ok", "fail", "skip", "error")
_CODE = {s: i for i, s in enumerate(STATUSES)}


def numeric(value: Any) -> float | None:
    """A row's raw value as a number for the raw statistics (bools count as 0/1; others: None)."""
    if isinstance(value, bool):
        return float(value)
    if isinstance(value, (int, float)):
        return float(value)
    return None


def skip_key(result: MetricResult) -> str:
    """The bucket of ``skip_breakdown``: the reason's category, never the sample-specific detail
    (which stays on the sample's row)."""
    if result.status == "error":
        return f"error: {result.diagnostics.get('exception', 'Exception')}"
    category = result.diagnostics.get("skip_category")
    if isinstance(category, str) and category:
        return category
    return reason_category(result.skip_reason or "skipped")


class OutcomeColumns:
    """Per sample, in run order: status code, raw and normalized values (each with a presence
    flag: a NaN stays a NaN, never a missing value), the penalised flag, the skip category."""

    def __init__(self) -> None:
        self.status = array("b")
        self.raw, self.has_raw = array("d"), array("b")
        self.norm, self.has_norm = array("d"), array("b")
        self.penalised = array("b")
        self.skip = array("i")  # index into categories; -1 for a scored (ok / fail) row
        self.categories: list[str] = []
        self._index: dict[str, int] = {}

    @classmethod
    def of(cls, rows: Iterable[MetricResult]) -> "OutcomeColumns":
        columns = cls()
        for row in rows:
            columns.add(row)
        return columns

    def __len__(self) -> int:
        return len(self.status)

    def add(self, row: MetricResult) -> None:
        status = row.status
        self.status.append(_CODE[status])
        scored = status in ("ok", "fail")
        raw = numeric(row.raw_value) if scored else None
        norm = row.normalized_value if scored else None
        self.raw.append(0.0 if raw is None else raw)
        self.has_raw.append(raw is not None)
        self.norm.append(0.0 if norm is None else norm)
        self.has_norm.append(norm is not None)
        self.penalised.append(bool(scored and row.diagnostics.get("penalised")))
        self.skip.append(-1 if scored else self._category(skip_key(row)))

    def _category(self, key: str) -> int:
        index = self._index.get(key)
        if index is None:
            index = self._index[key] = len(self.categories)
            self.categories.append(key)
        return index

    def take(self, indices: Sequence[int]) -> "OutcomeColumns":
        """The columns of the rows at ``indices`` (in that order)."""
        out = OutcomeColumns()
        pick = np.asarray(indices, dtype=np.intp)
        for name, code in (("status", "b"), ("raw", "d"), ("has_raw", "b"), ("norm", "d"), ("has_norm", "b"),
                           ("penalised", "b"), ("skip", "i")):
            setattr(out, name, array(code, self._np(name)[pick].tobytes()))
        out.categories, out._index = self.categories, self._index
        return out

    def _np(self, name: str) -> np.ndarray:
        column = getattr(self, name)
        return np.frombuffer(column, dtype={"b": np.int8, "d": np.float64, "i": np.int32}[column.typecode])

    # -- what default_aggregate reads -------------------------------------------------------------
    def scored_mask(self) -> np.ndarray:
        return self._np("status") <= _CODE["fail"]

    def values(self, which: str) -> list[float]:
        """The raw (``"raw"``) or normalized (``"norm"``) values of the scored rows that have one, in order."""
        keep = self.scored_mask() & (self._np(f"has_{which}") != 0)
        return self._np(which)[keep].tolist()

    def status_counts(self) -> dict[str, int]:
        counts = np.bincount(self._np("status"), minlength=len(STATUSES)) if len(self) else [0] * len(STATUSES)
        return {s: int(counts[i]) for i, s in enumerate(STATUSES)}

    def skip_keys(self) -> list[str]:
        """The reason category of every skipped or errored row, in row order."""
        return [self.categories[i] for i in self._np("skip")[~self.scored_mask()].tolist()]

    def n_penalised(self) -> int:
        return int(np.count_nonzero(self._np("penalised")))
