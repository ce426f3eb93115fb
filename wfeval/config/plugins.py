"""Where wfeval finds its plugins: one mechanism for every kind (docs/architecture.md).

A plugin is a class and a config file that names it. The built-in options of a group are the
files ``conf/<group>/<option>.yaml`` (the package ``wfeval.conf``); each names its class with
``_target_``, read without importing anything. Installed packages add classes through entry
points named after the kind (``wfeval.metrics``, ``wfeval.decoders``), read from package metadata
only. Nothing here imports a plugin until a caller asks for its class
(:func:`import_target`); ``wfeval.config`` imports no plugin package.

From this one listing:

- every built-in option's structured-config schema is derived from its class and stored in
  Hydra's ConfigStore as ``schema/<group>/<option>`` (:func:`wfeval.config.derive.register_schemas`),
  built only when a config loads it;
- the metric registry (:mod:`wfeval.metrics.registry`) resolves ids, aliases and entry points;
- a benchmark's metric suite ``metric/suite_<benchmark>`` is the benchmark file's ``metrics``
  (:func:`benchmark_metrics`): a benchmark lists its metrics once.
"""

from __future__ import annotations

import functools
import importlib
from importlib import resources
from typing import Any

CONFIG_PACKAGE = "wfeval.conf"

#: groups whose options name a class; each has a base schema of the keys the core reads
#: (:data:`wfeval.config.schema.BASE_SCHEMAS`)
CLASS_GROUPS = ("benchmark", "metric", "model", "protocol")


def _yaml_load(text: str) -> Any:
    import yaml

    loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)  # libyaml when present: 10x faster, same result
    return yaml.load(text, Loader=loader)


@functools.lru_cache(maxsize=None)
def option_files(group: str) -> dict[str, dict]:
    """Built-in option → its config file's data, for every ``conf/<group>/*.yaml`` (sorted)."""
    folder = resources.files(CONFIG_PACKAGE).joinpath(group)
    out = {}
    if not folder.is_dir():
        return out
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            data = _yaml_load(entry.read_text(encoding="utf-8"))
            out[entry.name.removesuffix(".yaml")] = data if isinstance(data, dict) else {}
    return out


@functools.lru_cache(maxsize=None)
def builtin_targets(group: str) -> dict[str, str]:
    """Built-in option → import path of its class (``module.Class``), from ``conf/<group>/*.yaml``."""
    return {name: data["_target_"] for name, data in option_files(group).items()
            if isinstance(data.get("_target_"), str)}


def benchmark_metrics(benchmark: str) -> list[str] | None:
    """The metric ids a built-in benchmark's file lists (``metrics:``), or None for no such benchmark."""
    data = option_files("benchmark").get(benchmark)
    if data is None:
        return None
    return metric_ids(data.get("metrics"))


def metric_entry(entry: Any) -> tuple[str, str | None]:
    """``(id, pinned version or None)`` of one entry of a benchmark's ``metrics``: ``psnr`` or
    ``psnr==1.0`` (the evidence gate requires that version)."""
    metric_id, _, version = str(entry).partition("==")
    return metric_id.strip(), (version.strip() or None)


def metric_ids(listed: Any) -> list[str]:
    """The ids of a benchmark's ``metrics`` (a list of ``id`` or ``id==version``)."""
    return [metric_entry(m)[0] for m in listed or ()]


def metric_versions(listed: Any) -> dict[str, str]:
    """The versions a benchmark's ``metrics`` pins (``psnr==1.0``)."""
    return {m: v for m, v in map(metric_entry, listed or ()) if v is not None}


def import_target(target: str) -> Any:
    """The object ``module.attr`` (or ``module:attr``) names, importing its module."""
    module, sep, attr = target.rpartition(":") if ":" in target else target.rpartition(".")
    return getattr(importlib.import_module(module), attr)


def entry_points(group: str) -> dict[str, Any]:
    """Installed entry points of ``group`` (``wfeval.metrics``, ``wfeval.decoders``) by name
    (package metadata only; nothing is imported)."""
    from importlib import metadata

    return {ep.name: ep for ep in metadata.entry_points(group=group)}
