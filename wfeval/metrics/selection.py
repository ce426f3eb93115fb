"""Which metrics a run scores, and the rule that selected each (a pure function; docs/protocols.md).

Metric groups are declared once, here (:data:`METRIC_GROUPS`). Precedence, first match wins and
an id is never selected twice:

1. ``metric=[a,b]`` given explicitly: exactly those (rule ``metric``); protocol and task
   additions do not apply — an explicit list replaces everything;
2. otherwise the benchmark's own suite (rule ``benchmark``), then the protocol's
   ``metric_ids`` and ``metric_groups`` (rule ``protocol``), then the task's (rule ``task``);
3. ``extra_metrics=[...]`` always adds (rule ``extra_metrics``).

``results.json`` records the rule of every metric under ``metric_selection``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Mapping, Sequence

METRIC_GROUPS: dict[str, tuple[str, ...]] = {
    "reference": ("psnr", "ssim", "mse", "mae", "lpips"),
    "temporal": ("flicker", "motion_magnitude", "frame_repeat_rate"),
    "control": ("action_following", "agent_position_error"),
    "distribution": ("fvd",),
    "interactive": ("step_latency", "real_time_factor"),
    "planning": ("goal_success", "steps_to_goal", "spl"),
}
"""Metric group name → metric ids, in display order."""

RULES = ("metric", "benchmark", "protocol", "task", "extra_metrics")


@dataclass(frozen=True)
class Selected:
    metric_id: str
    rule: str  # one of RULES
    source: str  # e.g. "protocol.metric_groups[interactive]"


def expand(ids: Sequence[str], groups: Sequence[str], where: str,
           table: Mapping[str, Sequence[str]] = METRIC_GROUPS) -> list[tuple[str, str]]:
    """(metric id, source) for ``<where>.metric_ids`` then each of ``<where>.metric_groups``."""
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
    table: Mapping[str, Sequence[str]] = METRIC_GROUPS,
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
        add([(m, "benchmark suite") for m in chosen], "benchmark")
        for rule, node in (("protocol", protocol), ("task", task)):
            node = node or {}
            add(expand(list(node.get("metric_ids") or ()), list(node.get("metric_groups") or ()), rule, table), rule)
    add([(m, "extra_metrics") for m in extra], "extra_metrics")
    return list(picked.values())


def metric_choice_is_explicit(cfg: Any) -> bool:
    """True when ``metric=`` was given (Hydra's recorded choice is not the ``suite_<benchmark>`` default);
    outside a Hydra job, when the metric node differs from the benchmark's declared metrics."""
    try:
        from hydra.core.hydra_config import HydraConfig

        if HydraConfig.initialized():
            choice = HydraConfig.get().runtime.choices.get("metric")
            if choice is not None:
                return not str(choice).startswith("suite_")
    except Exception:  # noqa: BLE001 - no Hydra job: fall back to the comparison
        pass
    declared = list((cfg.get("benchmark") or {}).get("metrics") or [])
    return sorted(str(k) for k in (cfg.get("metric") or {})) != sorted(declared)
