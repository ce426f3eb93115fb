"""Compact columns of a run's metric rows: what the report needs of each row, a few bytes a row.

:class:`MetricRows` keeps, per row of one metric, the sample id (UTF-8 bytes in a numpy array),
the row's status as shown and as counted (2 bytes each, codes into a shared table), its value
(float64, NaN for none) and its skip reason (a 4-byte code): about 40 bytes a sample instead of
the ~1 KB parsed row. When every row is read, :meth:`MetricRows.finish` applies the rule of
``metrics.jsonl`` that the last row per sample wins (a resumed run appends rows), keeping the
place where the sample first appeared — what a dict keyed by sample id gives.
"""

from __future__ import annotations

import json
from typing import Any, Iterable

import numpy as np

from wfeval.report.html.values import row_value, status_of


class Column:
    """A 1-d numpy array that grows by doubling."""

    __slots__ = ("data", "n")

    def __init__(self, dtype: Any, capacity: int = 256):
        self.data, self.n = np.empty(capacity, dtype), 0

    def append(self, value: Any) -> None:
        if self.n == len(self.data):
            grown = np.empty(max(256, 2 * len(self.data)), self.data.dtype)
            grown[:self.n] = self.data
            self.data = grown
        self.data[self.n] = value
        self.n += 1

    @property
    def values(self) -> np.ndarray:
        return self.data[:self.n]

    def keep(self, mask: np.ndarray) -> None:
        """Only the values where ``mask`` is true (a copy: the spare capacity is released)."""
        self.data = self.values[mask].copy()
        self.n = len(self.data)


def encode(sample_id: Any) -> bytes | None:
    """A sample id as the bytes the columns hold (UTF-8 keeps the order of ``str``); None for a non-string."""
    return sample_id.encode("utf-8", "surrogatepass") if isinstance(sample_id, str) else None


def decode(raw: bytes) -> str:
    return bytes(raw).decode("utf-8", "surrogatepass")


class IdColumn(Column):
    """Sample ids as fixed-width bytes (widened when a longer id comes). numpy drops trailing NUL
    bytes from such an array, so an id ending in one turns the column into Python bytes objects."""

    def __init__(self) -> None:
        super().__init__("S8")

    def append(self, value: Any) -> None:
        raw = encode(value)
        if self.data.dtype != object:
            if raw.endswith(b"\0"):
                self.data = self.data.astype(object)
            elif len(raw) > self.data.dtype.itemsize:
                self.data = self.data.astype(f"S{max(len(raw), 2 * self.data.dtype.itemsize)}")
        super().append(raw)


class Codes:
    """Distinct values (statuses, reasons) and their codes; a row stores the code."""

    def __init__(self) -> None:
        self.values: list[Any] = []
        self._index: dict[Any, int] = {}

    @staticmethod
    def _key(value: Any) -> Any:
        try:
            return type(value).__name__, value, hash(value)
        except TypeError:  # a list or dict where a string belongs: kept, told apart by its JSON
            return "unhashable", json.dumps(value, sort_keys=True, default=str)

    def code(self, value: Any) -> int:
        key = self._key(value)
        found = self._index.get(key)
        if found is None:
            found = self._index[key] = len(self.values)
            self.values.append(value)
        return found

    def codes_of(self, values: Iterable[Any]) -> list[int]:
        """The codes of those of ``values`` seen so far."""
        return [self._index[k] for k in map(self._key, values) if k in self._index]


def sort_by(key: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """The order of (key, id) pairs, ascending (two stable sorts: ids may be Python bytes objects)."""
    by_id = np.argsort(ids, kind="stable")
    return by_id[np.argsort(key[by_id], kind="stable")]


class MetricRows:
    """One metric's rows of a run, one per sample once :meth:`finish` ran."""

    def __init__(self, statuses: Codes, reasons: Codes):
        self.statuses, self.reasons = statuses, reasons
        self.ids = IdColumn()
        self.shown = Column(np.int16)  # diagnostics.status as the page prints it ("" when absent)
        self.status = Column(np.int16)  # the status counted: ok / fail / skip / error
        self.value = Column(np.float64)
        self.reason = Column(np.int32)

    def add(self, sample_id: str, row: dict[str, Any]) -> Any:
        """Keep what the page needs of ``row``; returns its status."""
        status = status_of(row)
        value = row_value(row)
        self.ids.append(sample_id)
        self.shown.append(self.statuses.code((row.get("diagnostics") or {}).get("status", "")))
        self.status.append(self.statuses.code(status))
        self.value.append(np.nan if value is None else value)
        self.reason.append(self.reasons.code(str(row.get("skip_reason") or "") if status in ("skip", "error") else ""))
        return status

    def finish(self) -> set[str]:
        """The last row per sample wins, in the place of the sample's first row; returns the
        samples that had more than one row."""
        columns = (self.shown, self.status, self.value, self.reason)
        ids = self.ids.values
        order = np.argsort(ids, kind="stable")  # equal ids stay in file order
        ordered = ids[order]
        starts = np.ones(len(ids), bool)
        starts[1:] = ordered[1:] != ordered[:-1]
        if starts.all():
            for column in (self.ids, *columns):
                column.keep(slice(None))
            return set()
        first = np.flatnonzero(starts)
        last = np.append(first[1:], len(ids)) - 1
        repeated = last > first
        for column in columns:
            column.data[order[first[repeated]]] = column.data[order[last[repeated]]]
        keep = np.ones(len(ids), bool)
        keep[order[~starts]] = False
        for column in (self.ids, *columns):
            column.keep(keep)
        return {decode(raw) for raw in ordered[first[repeated]]}

    def __len__(self) -> int:
        return self.ids.n

    def _mask(self, *statuses: str) -> np.ndarray:
        return np.isin(self.status.values, self.statuses.codes_of(statuses))

    def scored(self) -> tuple[np.ndarray, np.ndarray]:
        """Values and ids of the rows counted ok or fail that have a value (the strips' candidates)."""
        mask = self._mask("ok", "fail") & ~np.isnan(self.value.values)
        return self.value.values[mask], self.ids.values[mask]

    def not_scored(self, limit: int) -> list[tuple[Any, str, int, list[str]]]:
        """(status, reason, count, the ``limit`` smallest ids) per skip / error status and reason."""
        index = np.flatnonzero(self._mask("skip", "error"))
        if not len(index):
            return []
        key = self.status.values[index].astype(np.int64) << 32 | self.reason.values[index]
        ids = self.ids.values[index]
        order = sort_by(key, ids)
        key, ids = key[order], ids[order]
        starts = np.flatnonzero(np.append(True, key[1:] != key[:-1]))
        ends = np.append(starts[1:], len(key))
        return [(self.statuses.values[int(key[a]) >> 32], self.reasons.values[int(key[a]) & 0xFFFFFFFF], int(b - a),
                 [decode(raw) for raw in ids[a:min(b, a + limit)]]) for a, b in zip(starts, ends)]

    def positions(self, sample_ids: Iterable[Any]) -> dict[str, int]:
        """The row of each of ``sample_ids`` that has one."""
        ids = self.ids.values
        packed = ids.dtype != object  # such a column holds no id ending in NUL, which numpy would cut
        wanted = [raw for raw in map(encode, sample_ids) if raw is not None and not (packed and raw.endswith(b"\0"))]
        if not wanted or not len(self):
            return {}
        index = np.flatnonzero(np.isin(ids, np.array(wanted, dtype=None if packed else object)))
        return {decode(ids[i]): int(i) for i in index}

    def cell(self, i: int) -> tuple[Any, float | None]:
        """(status as shown, value) of row ``i``."""
        value = float(self.value.data[i])
        return self.statuses.values[self.shown.data[i]], None if np.isnan(value) else value
