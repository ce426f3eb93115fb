"""Which metrics a run scores, and the rule that selected each (a pure function; docs/protocols.md).

Metric groups are declared once, on the metric classes (``groups``; :func:`metric_groups`).
Precedence, first match wins and
an id is never selected twice:

1. ``metric=[a,b]`` given explicitly: exactly those (rule ``metric``); protocol and task
   additions do not apply — an explicit list replaces everything;
2. otherwise the benchmark's own suite (rule ``benchmark``; not for a task whose
   ``metadata.benchmark_metrics`` is false, e.g. ``task=probing``), then the protocol's
   ``metric_ids`` and ``metric_groups`` (rule ``protocol``), then the task's (rule ``task``);
3. ``extra_metrics=[...]`` always adds (rule ``extra_metrics``).

``results.json`` records the rule of every metric under ``metric_selection``.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from typing import Any, Mapping, Sequence


@functools.lru_cache(maxsize=None)
def metric_groups() -> dict[str, tuple[str, ...]]:
    """Metric group name → the built-in metric ids that declare it (each class's ``groups``), both
    sorted by name. Imports the built-in metric classes (numpy, no torch)."""
    from wfeval.config.code import import_target
    from wfeval.config.plugins import builtin_targets

    table: dict[str, list[str]] = {}
    for metric_id, target in builtin_targets("metric").items():
        for group in getattr(import_target(target), "groups", ()):
            table.setdefault(group, []).append(metric_id)
    return {group: tuple(sorted(table[group])) for group in sorted(table)}


RULES = ("metric", "benchmark", "protocol", "task", "extra_metrics")


@dataclass(frozen=True)
class Selected:
    metric_id: str
    rule: str  # one of RULES
    source: str  # e.g. "protocol.metric_groups[interactive]"


def expand(ids: Sequence[str], groups: Sequence[str], where: str,
           table: Mapping[str, Sequence[str]] | None = None) -> list[tuple[str, str]]:
    """(metric id, source) for ``<where>.metric_ids`` then each of ``<where>.metric_groups``."""
    if table is None:
        table = metric_groups() if groups else {}
    out = [(str(m), f"{where}.metric_ids") for m in ids]
    for group in groups:
        if group not in table:
            raise ValueError(f"{where}.metric_groups: unknown group {group!r}; known: {', '.join(table)}")
        out += [(m, f"{where}.metric_groups[{group}]") for m in table[group]]
    return out


def select_metrics(
    *,
    chosen: Sequence[str],
    explicit: bool,
    protocol: Mapping[str, Any] | None = None,
    task: Mapping[str, Any] | None = None,
    extra: Sequence[str] = (),
    table: Mapping[str, Sequence[str]] | None = None,
) -> list[Selected]:
    """The ordered selection. ``chosen``: the ids of the composed ``metric`` node (the benchmark's
    suite, or the explicit ``metric=`` list when ``explicit``); ``protocol`` / ``task``: mappings
    with ``metric_ids`` and ``metric_groups``; ``extra``: ``extra_metrics``."""
    picked: dict[str, Selected] = {}

    def add(items: Sequence[tuple[str, str]], rule: str) -> None:
        for metric_id, source in items:
            if metric_id not in picked:
                picked[metric_id] = Selected(metric_id, rule, source)

    if explicit:
        add([(m, "metric=") for m in chosen], "metric")
    else:
        # a task whose output is not a video (task=probing) says so: the benchmark's pixel suite does not apply
        if ((task or {}).get("metadata") or {}).get("benchmark_metrics", True):
            add([(m, "benchmark suite") for m in chosen], "benchmark")
        for rule, node in (("protocol", protocol), ("task", task)):
            node = node or {}
            add(expand(list(node.get("metric_ids") or ()), list(node.get("metric_groups") or ()), rule, table), rule)
    add([(m, "extra_metrics") for m in extra], "extra_metrics")
    return list(picked.values())


def requested_metrics(overrides: Sequence[str]) -> list[str] | None:
    """The options a ``metric=`` override of ``overrides`` names (``metric=[a,b]`` -> a, b); None: no
    such override. The boundary that composed the config hands its overrides over (no Hydra job state
    is read here)."""
    from hydra.core.override_parser.overrides_parser import OverridesParser

    for override in OverridesParser.create().parse_overrides([str(o) for o in overrides]):
        if override.key_or_group == "metric" and not override.is_delete():
            value = override.value()
            return [str(v) for v in value] if isinstance(value, list) else [str(value)]
    return None


def metric_choice_is_explicit(cfg: Any) -> bool:
    """For a config composed where its overrides are not known (tests, the compose API): True when the
    metric node differs from the benchmark's declared metrics."""
    from wfeval.config.plugins import metric_ids

    declared = metric_ids((cfg.get("benchmark") or {}).get("metrics"))
    chosen = sorted(str(k) for k in (cfg.get("metric") or {}))
    return bool(chosen) and chosen != sorted(declared)  # none chosen: the benchmark's own (no suite file)
