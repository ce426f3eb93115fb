"""Numbers as the report writes them: the one home of number formatting for every rendering (the
terminal's tables, Markdown, the leaderboard, paired comparisons, the HTML report).

* :func:`fmt` — a value in a table: 4 significant digits (``28.14``, ``0.0001234``, ``3.534e+04``),
  ``yes`` / ``no`` for a boolean, anything else as ``str`` (an integer in full: ``12345``); a missing
  value (``None``) is ``missing``. The renderings differ there on purpose: plain text, Markdown and
  CSV-like tables write a hyphen (:data:`HYPHEN`, ASCII: what a terminal, a diff and a grep see),
  the HTML report an en dash (:data:`EN_DASH`, typographic; ``wfeval.report.html.values.fmt``).
* :func:`signed` — a difference ``A − B``: ``+`` before a positive one (``+0.1368``, ``-19.86``, ``0``).
* :func:`p_value` — a p-value in a text table: ``<0.0001``, 4 decimals below 0.01, else 3 significant digits.
* :func:`significant` — any real number with 4 significant digits, integers included (chart axes,
  action vectors: ``12345`` → ``1.234e+04``), where :func:`fmt` would write an integer in full.
* :func:`number` — a value as a finite float, or None (booleans, strings, NaN and infinities are None).
"""

from __future__ import annotations

import math
from typing import Any

HYPHEN = "-"  # a missing value in plain text, Markdown and the leaderboard's tables
EN_DASH = "–"  # a missing value in the HTML report
DIGITS = 4


def significant(value: float, digits: int = DIGITS) -> str:
    """``value`` (any real number, integers and booleans too) with ``digits`` significant digits."""
    return f"{value:.{digits}g}"


def fmt(value: Any, digits: int = DIGITS, missing: str = HYPHEN) -> str:
    """A value as a table shows it: ``None`` → ``missing`` (:data:`HYPHEN` in text, :data:`EN_DASH`
    in HTML); a boolean → ``yes`` / ``no``; a float → ``digits`` significant digits (``nan``,
    ``inf`` as such); anything else (an integer, a string) → ``str``."""
    if value is None:
        return missing
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        return significant(value, digits)
    return str(value)


def signed(value: float | None, missing: str = HYPHEN) -> str:
    """A difference as :func:`fmt` writes it, with ``+`` before a positive one (not before 0 or NaN)."""
    text = fmt(value, missing=missing)
    return f"+{text}" if value is not None and value > 0 else text


def p_value(value: float | None, missing: str = HYPHEN) -> str:
    """A p-value: ``<0.0001`` below 1e-4, 4 decimals below 0.01 (``0.0040``), else 3 significant
    digits (``0.125``, ``1``)."""
    if value is None:
        return missing
    return "<0.0001" if value < 1e-4 else f"{value:.4f}" if value < 0.01 else f"{value:.3g}"


def number(value: Any) -> float | None:
    """``value`` as a finite float; None for anything else (a boolean, a string, NaN, ±inf)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None
