"""``task=controllability``: each sample generated with its true actions and with K counterfactual
ones, from the same start and seed (``protocol=counterfactual``); ``action_sensitivity`` and
``idm_accuracy`` score them.

A family needs no interface of its own for it: its samples carry their actions
(``controls["actions"]``). Counterfactual actions are drawn uniformly over a discrete action set, or
within a continuous space's declared bounds (``BenchmarkSpec.action_space``), or from other windows
of the dataset itself (``source: dataset``). What this module owns is the task's own data,
``task.data.counterfactual`` (:func:`settings`).
"""

from __future__ import annotations

from typing import Any, Mapping

from wfeval.config.errors import ConfigError

DEFAULTS = {"count": 3, "seed": 0, "p_repeat": 0.5, "source": "auto"}
SOURCES = ("auto", "dataset", "uniform")


def settings(task_data: Mapping[str, Any] | None) -> dict[str, Any]:
    """``task.data.counterfactual`` with its defaults, checked (ConfigError naming the key)."""
    given = dict((task_data or {}).get("counterfactual") or {})
    unknown = sorted(set(given) - set(DEFAULTS))
    if unknown:
        raise ConfigError(f"task.data.counterfactual: unknown key(s) {unknown}; known: {', '.join(DEFAULTS)}")
    out = {**DEFAULTS, **given}
    count, seed, p = out["count"], out["seed"], out["p_repeat"]
    if isinstance(count, bool) or not isinstance(count, int) or count < 1:
        raise ConfigError(f"task.data.counterfactual.count must be an integer >= 1 (K sequences), got {count!r}")
    if isinstance(seed, bool) or not isinstance(seed, int):
        raise ConfigError(f"task.data.counterfactual.seed must be an integer, got {seed!r}")
    if not isinstance(p, (int, float)) or isinstance(p, bool) or not 0.0 <= float(p) <= 1.0:
        raise ConfigError(f"task.data.counterfactual.p_repeat must be in [0, 1], got {p!r}")
    if out["source"] not in SOURCES:
        raise ConfigError(f"task.data.counterfactual.source must be one of {', '.join(SOURCES)}, got {out['source']!r}")
    return {"count": count, "seed": seed, "p_repeat": float(p), "source": str(out["source"])}
