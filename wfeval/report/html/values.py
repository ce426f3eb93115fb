"""Reading values out of results and metric rows: the headline number, a row's value; the page's
numbers (:mod:`wfeval.report.numbers`, with an en dash for a missing one)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from wfeval.report.numbers import EN_DASH, number
from wfeval.report.numbers import fmt as _fmt
from wfeval.results.record import Aggregate, MeasurementInfo

if TYPE_CHECKING:
    from wfeval.report.html.load import RunData

__all__ = ["fmt", "number", "headline", "measurements_of", "info_of", "higher_is_better", "status_of", "row_value"]


def fmt(value: Any, digits: int = 4) -> str:
    """A value as the HTML report shows it: :func:`wfeval.report.numbers.fmt` with ``missing`` =
    :data:`~wfeval.report.numbers.EN_DASH` (``–``)."""
    return _fmt(value, digits, missing=EN_DASH)


def headline(agg: Aggregate | None) -> float | None:
    """The aggregate's headline number (:attr:`Aggregate.value`) when it is a finite number."""
    return number(agg.value) if agg is not None else None


def measurements_of(runs: Iterable["RunData"]) -> list[str]:
    out: list[str] = []
    for run in runs:
        out += [m for m in (run.results.results if run.results is not None else {}) if m not in out]
    return out


def aggregate_of(run: "RunData", measurement: str) -> Aggregate | None:
    """The run's aggregate of ``measurement`` (None without results or without that measurement)."""
    return run.results.results.get(measurement) if run.results is not None else None


def info_of(runs: Iterable["RunData"], measurement: str) -> MeasurementInfo | None:
    """What the first run that records ``measurement`` says about it (unit, bounds, family, direction)."""
    for run in runs:
        if run.results is not None and measurement in run.results.metrics:
            return run.results.metrics[measurement]
    return None


def higher_is_better(runs: Iterable["RunData"], measurement: str) -> bool | None:
    info = info_of(runs, measurement)
    return info.higher_is_better if info is not None else None


def status_of(row: dict[str, Any]) -> Any:
    """The status a metric row counts as: its ``diagnostics.status`` (ok / fail / skip / error), else by ``valid``."""
    return (row.get("diagnostics") or {}).get("status", "ok" if row.get("valid") else "skip")


def row_value(row: dict[str, Any]) -> float | None:
    value = number(row.get("normalized_value"))
    return value if value is not None else number(row.get("raw_value"))
