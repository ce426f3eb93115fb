"""The built-in metrics as their config files name them: id → ``module.Class`` (imports no metric).

Kept apart from :mod:`wfeval.metrics.registry` so that storing the metric schemas
(:mod:`wfeval.metrics.schemas`, run by ``python -m wfeval --help``) imports nothing heavy.
"""

from __future__ import annotations

import functools
import importlib
from importlib import resources
from typing import Any

CONFIG_PACKAGE = "wfeval.conf"


@functools.lru_cache(maxsize=None)
def builtin_targets() -> dict[str, str]:
    """Built-in metric id → import path of its class (``module.Class``), from ``conf/metric/*.yaml``."""
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: 10x faster, same result
    folder = resources.files(CONFIG_PACKAGE).joinpath("metric")
    out = {}
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if not entry.name.endswith(".yaml") or entry.name.startswith("suite_"):
            continue
        data = yaml.load(entry.read_text(encoding="utf-8"), Loader=loader) or {}
        if isinstance(data, dict) and isinstance(data.get("_target_"), str):
            out[entry.name.removesuffix(".yaml")] = data["_target_"]
    return out


def import_target(target: str) -> Any:
    """The object ``module.attr`` names (importing its module)."""
    module, _, attr = target.rpartition(".")
    return getattr(importlib.import_module(module), attr)
