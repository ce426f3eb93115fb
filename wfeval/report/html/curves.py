"""The horizon curves of one run: per metric, the mean per-frame value and its 95% band, streamed.

A metric row may keep a curve in ``components`` (``CURVE_KEYS``). The page shows, per frame x,
the mean over the scored samples and 1.96 standard errors around it, computed as Python's
``sum(values) / len(values)`` and ``sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))`` over
the values in the order the samples first appear. Both sums are carried across the rows instead
of over lists: :class:`Sum` adds exactly as the builtin ``sum`` of this Python does (a plain
left-to-right sum before 3.12, Neumaier's compensated sum since), checked against it on import;
the squares need the mean, so they are a second reading of the rows. Memory: a few numbers per
frame, whatever the number of samples. Were the builtin ``sum`` ever to add otherwise, the
values are kept in lists and summed by it, as before (exact, not flat).
"""

from __future__ import annotations

import math
import random
from typing import Any

from wfeval.report.numbers import number
from wfeval.results.breakdown import CURVE_KEYS  # key → (x of item i, what x means): one home with the results API

OWN_CURVES = ("per_frame", "per_step")  # curves of the metric's own per-frame value: its bounds hold


class Sum:
    """A running ``sum()`` of floats, equal to the builtin's over the same values in the same order."""

    __slots__ = ("total", "carry")
    compensated = False  # set below from what the builtin does

    def __init__(self) -> None:
        self.total: Any = 0  # the builtin starts from the int 0
        self.carry = 0.0

    def add(self, x: float) -> None:
        if not Sum.compensated:
            self.total = self.total + x
            return
        if type(self.total) is int:  # the first float: 0 + x, nothing to compensate yet
            self.total = self.total + x
            return
        t = self.total + x
        if abs(self.total) >= abs(x):
            self.carry += (self.total - t) + x
        else:
            self.carry += (x - t) + self.total
        self.total = t

    def value(self) -> Any:
        if Sum.compensated and self.carry and math.isfinite(self.carry):
            return self.total + self.carry
        return self.total


def _streamed_sum(values: list[float]) -> Any:
    acc = Sum()
    for v in values:
        acc.add(v)
    return acc.value()


def _probe_lists() -> list[list[float]]:
    rng = random.Random(16)
    lists = [[1e16, 1.0, -1e16], [-0.0], [0.1] * 10, [1e308, 1e308, -1e308], [3.0, -0.0, 1e-300, 2.5e-16]]
    for _ in range(40):
        lists.append([rng.uniform(-1, 1) * 10 ** rng.randint(-20, 20) for _ in range(rng.randint(1, 300))])
    return lists


def _agrees(lists: list[list[float]]) -> bool:
    def same(a: Any, b: Any) -> bool:
        return repr(a) == repr(b) and type(a) is type(b)

    return all(same(_streamed_sum(values), sum(values)) for values in lists)


def _choose() -> bool:
    """Whether sums stream (Sum set to add as the builtin does): False if neither way matches it."""
    lists = _probe_lists()
    for compensated in (False, True):
        Sum.compensated = compensated
        if _agrees(lists):
            return True
    return False


STREAMING = _choose()


class Horizon:
    """One metric's curve in one run: per x the running sums (or, not streaming, the values)."""

    def __init__(self) -> None:
        self.sums: dict[int, Sum] = {}
        self.counts: dict[int, int] = {}
        self.squares: dict[int, Sum] = {}
        self.lists: dict[int, list[float]] = {}
        self.means: dict[int, float] = {}
        self.component: str | None = None  # of the last row that keeps a curve (names the chart)
        self.xlabel = "frame"
        self.cap: float | None = None  # the value a metric puts in place of an unbounded one (PSNR's max_db)
        self.capped: dict[int, int] = {}  # per x: values at the cap

    def _points(self, row: dict[str, Any]):
        components = row.get("components") or {}
        for key, x_of, meaning in CURVE_KEYS:
            series = components.get(key)
            if isinstance(series, list) and series:
                self.xlabel, self.component = meaning, key
                for j, v in enumerate(series):
                    if number(v) is not None:
                        yield x_of(components, j), float(v)
                break

    def add(self, row: dict[str, Any]) -> None:
        """A scored row, first reading (rows in the order their samples first appear)."""
        cap = number((row.get("components") or {}).get("max_db"))
        if cap is not None and self.cap is None:
            self.cap = cap
        for x, v in self._points(row):
            if cap is not None and v >= cap:
                self.capped[x] = self.capped.get(x, 0) + 1
            if not STREAMING:
                self.lists.setdefault(x, []).append(v)
                continue
            if x not in self.sums:
                self.sums[x], self.counts[x] = Sum(), 0
            self.sums[x].add(v)
            self.counts[x] += 1

    @property
    def needs_squares(self) -> bool:
        """Whether a second reading of the rows (:meth:`add_square`) must follow."""
        return STREAMING and any(n > 1 for n in self.counts.values())

    def add_square(self, row: dict[str, Any]) -> None:
        """The same row again, second reading: its squared distances to the means."""
        if not self.means:
            self.means = {x: self.sums[x].value() / self.counts[x] for x in self.sums}
        for x, v in self._points(row):
            if x not in self.squares:
                self.squares[x] = Sum()
            self.squares[x].add((v - self.means[x]) ** 2)

    def curve(self) -> tuple[list[int], list[float], list[float]] | None:
        """(x, mean, half width of the band) or None when no value was kept."""
        if not STREAMING:
            xs = sorted(self.lists)
            values = [self.lists[x] for x in xs]
            mean = [sum(v) / len(v) for v in values]
            half = [1.96 * _std(v) / math.sqrt(len(v)) if len(v) > 1 else 0.0 for v in values]
            return (xs, mean, half) if xs else None
        xs = sorted(self.sums)
        if not xs:
            return None
        mean = [self.sums[x].value() / self.counts[x] for x in xs]  # as in add_square
        half = [1.96 * math.sqrt(self.squares[x].value() / (self.counts[x] - 1)) / math.sqrt(self.counts[x])
                if self.counts[x] > 1 else 0.0 for x in xs]
        return xs, mean, half


def _std(values: list[float]) -> float:
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))
