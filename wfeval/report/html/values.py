"""Reading values out of results and metric rows: the headline number, a row's value; the page's
numbers (:mod:`wfeval.report.numbers`, with an en dash for a missing one)."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Iterable

from wfeval.report.numbers import EN_DASH, number
from wfeval.report.numbers import fmt as _fmt
from wfeval.results import headline as results_headline

if TYPE_CHECKING:
    from wfeval.report.html.load import RunData

__all__ = ["fmt", "number", "headline", "measurements_of", "higher_is_better", "status_of", "row_value"]


def fmt(value: Any, digits: int = 4) -> str:
    """A value as the HTML report shows it: :func:`wfeval.report.numbers.fmt` with ``missing`` =
    :data:`~wfeval.report.numbers.EN_DASH` (``–``)."""
    return _fmt(value, digits, missing=EN_DASH)


def headline(agg: dict[str, Any]) -> float | None:
    """The aggregate's headline number (:func:`wfeval.results.headline`) when it is a finite number."""
    return number(results_headline(agg))


def measurements_of(runs: Iterable["RunData"]) -> list[str]:
    out: list[str] = []
    for run in runs:
        out += [m for m in ((run.results or {}).get("results") or {}) if m not in out]
    return out


def higher_is_better(runs: Iterable["RunData"], measurement: str) -> bool | None:
    for run in runs:
        info = ((run.results or {}).get("metrics") or {}).get(measurement)
        if info is not None:
            return info.get("higher_is_better")
    return None


def status_of(row: dict[str, Any]) -> Any:
    """The status a metric row counts as: its ``diagnostics.status`` (ok / fail / skip / error), else by ``valid``."""
    return (row.get("diagnostics") or {}).get("status", "ok" if row.get("valid") else "skip")


def row_value(row: dict[str, Any]) -> float | None:
    value = number(row.get("normalized_value"))
    return value if value is not None else number(row.get("raw_value"))
