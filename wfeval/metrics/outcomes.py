"""Build MetricResults for the four item states: ok / fail / skip / error.

``ok`` and ``fail`` are scored outcomes (``valid=True``; they count in the denominator);
``skip`` and ``error`` are not (``valid=False`` with a ``skip_reason``). The state is recorded in
``diagnostics["status"]`` and read back by :attr:`wfeval.api.MetricResult.status`.
"""

from __future__ import annotations

import re
import traceback
from typing import Any, Mapping

from wfeval.api import MetricResult


def scored(
    sample_id: str,
    metric_id: str,
    value: Any,
    *,
    normalized: float | None = None,
    passed: bool = True,
    components: Mapping[str, Any] | None = None,
    diagnostics: Mapping[str, Any] | None = None,
) -> MetricResult:
    """An ``ok`` (or, with ``passed=False``, a ``fail``) item."""
    norm = normalized if normalized is not None else (float(value) if isinstance(value, (int, float)) else None)
    return MetricResult(
        sample_id=sample_id,
        metric_id=metric_id,
        raw_value=value,
        normalized_value=norm,
        components=dict(components or {}),
        valid=True,
        diagnostics={**(diagnostics or {}), "status": "ok" if passed else "fail"},
    )


_QUOTED = re.compile(r"'[^']*'|\"[^\"]*\"")
_NUMBER = re.compile(r"(?<![A-Za-z_\d.])\d+(?:\.\d+)?(?![A-Za-z_\d])")


def reason_category(reason: str) -> str:
    """A skip reason without its sample-specific detail (quoted names and numbers), so that
    ``skip_breakdown`` counts by kind: ``"shape (16, 64, 64, 3) of 'x-0003'"`` -> ``"shape (N, N, N, N) of '…'"``."""
    return _NUMBER.sub("N", _QUOTED.sub("'…'", str(reason)))


def skipped(sample_id: str, metric_id: str, reason: str, *, category: str | None = None,
            **diagnostics: Any) -> MetricResult:
    """The metric could not score this item (missing input, unsupported sample, ...).

    ``category`` (default: :func:`reason_category` of the reason) is the bucket the aggregate's
    ``skip_breakdown`` counts it in; the full reason stays on this row."""
    if category is not None:
        diagnostics["skip_category"] = category
    return MetricResult(
        sample_id=sample_id,
        metric_id=metric_id,
        valid=False,
        coverage=0.0,
        skip_reason=reason,
        diagnostics={**diagnostics, "status": "skip"},
    )


def errored(sample_id: str, metric_id: str, exc: BaseException) -> MetricResult:
    """The metric raised on this item; the traceback is kept in the diagnostics."""
    return MetricResult(
        sample_id=sample_id,
        metric_id=metric_id,
        valid=False,
        coverage=0.0,
        skip_reason=f"error: {type(exc).__name__}: {exc}",
        diagnostics={
            "status": "error",
            "exception": type(exc).__name__,
            "traceback": "".join(traceback.format_exception(type(exc), exc, exc.__traceback__)),
        },
    )
