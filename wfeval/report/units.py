"""Units printed beside values: the short form of a metric's declared unit (``output_unit``).

A metric declares its unit in words (``"ms per step call"``, ``"fraction of episodes"``,
``"index [-1, 1]"``); a table prints the short symbol beside the value (``21.3 ms``, ``28.1 dB``)
and nothing for a dimensionless value (fractions, indices, scores, FVD).
"""

from __future__ import annotations

from typing import Any

from wfeval.report.numbers import EN_DASH, HYPHEN
from wfeval.results.record import RunResults

DIMENSIONLESS = ("fraction", "score", "index", "fvd", "ratio", "share", "rate")
SHORT = {"levels^2": "levels²", "× real time": "× real time", "real steps": "steps"}


def short_unit(unit: Any) -> str:
    """``"ms per step call"`` → ``"ms"``; ``"fraction of steps"`` → ``""``; unknown words are kept."""
    if not isinstance(unit, str) or not unit.strip():
        return ""
    text = unit.strip()
    if text in SHORT:
        return SHORT[text]
    head = text.split(" per ", 1)[0].split(" of ", 1)[0].strip()
    if head.split(" ", 1)[0].lower() in DIMENSIONLESS:
        return ""
    return SHORT.get(head, head)


def unit_of(document: RunResults | None, measurement: str) -> str:
    """The short unit of a measurement of a run's results ("" when it declares none)."""
    return short_unit(document.info(measurement).unit) if document is not None else ""


def with_unit(text: str, unit: str) -> str:
    """``"28.1"`` + ``"dB"`` → ``"28.1 dB"``; ``×`` is written against the number (``1.9×``)."""
    if not unit or text in ("", HYPHEN, EN_DASH, "n/a", "missing"):
        return text
    if unit.startswith("×"):
        return f"{text}{unit}"
    return f"{text} {unit}"
