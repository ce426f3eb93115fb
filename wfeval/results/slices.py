"""Group slices: each metric's aggregate per ``key=value`` group (``benchmark.group_by``).

:func:`group_value` says which group a sample is in; :meth:`wfeval.results.sample_table.ResultTable.slices`
aggregates each metric over each group."""

from __future__ import annotations

from typing import Any

from wfeval.api import GenerationRequest

GROUP_KEYS = ("split", "task_id", "benchmark_id", "protocol")


def group_value(request: GenerationRequest, key: str) -> str:
    """``split``, ``task_id``, ``benchmark_id``, ``protocol`` or ``metadata.<key>`` of a request, as text."""
    if key.startswith("metadata."):
        value: Any = request.metadata.get(key.removeprefix("metadata."))
    elif key in GROUP_KEYS:
        value = getattr(request, key)
    else:
        raise ValueError(f"benchmark.group_by: unknown key {key!r}; use split, task_id, benchmark_id, "
                         "protocol or metadata.<key>")
    return "(none)" if value is None else str(value)
