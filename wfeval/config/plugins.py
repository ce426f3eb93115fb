"""Where wfeval finds its plugins: one mechanism for every kind (docs/architecture.md).

A plugin is a class and a config file that names it. The built-in options of a group are the
files ``conf/<group>/<option>.yaml`` (the package ``wfeval.conf``); each names its class with
``_target_``, read without importing anything. Installed packages add classes through entry
points named after the kind (``wfeval.metrics``, ``wfeval.decoders``), read from package metadata
only. Nothing here imports a plugin until a caller asks for its class
(:func:`wfeval.config.code.import_target`); ``wfeval.config`` imports no plugin package.

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
import re
from dataclasses import dataclass
from importlib import resources
from pathlib import Path
from typing import Any

from wfeval.utils.yaml_data import load_yaml

CONFIG_PACKAGE = "wfeval.conf"

#: groups whose options name a class; each has a base schema of the keys the core reads
#: (:data:`wfeval.config.schema.BASE_SCHEMAS`)
CLASS_GROUPS = ("benchmark", "metric", "model", "protocol")


@functools.lru_cache(maxsize=None)
def option_files(group: str) -> dict[str, dict]:
    """Built-in option → its config file's data, for every ``conf/<group>/*.yaml`` (sorted). A variant
    that inherits another option of its group (``defaults: [memory_maze, _self_]``) reads as Hydra
    composes it: the other option's data with its own laid over (mappings merge, lists replace)."""
    folder = resources.files(CONFIG_PACKAGE).joinpath(group)
    files = {}
    if not folder.is_dir():
        return files
    for entry in sorted(folder.iterdir(), key=lambda e: e.name):
        if entry.name.endswith(".yaml"):
            data = load_yaml(entry.read_text(encoding="utf-8"))
            files[entry.name.removesuffix(".yaml")] = data if isinstance(data, dict) else {}
    return {name: _inherited(name, files) for name in files}


def _inherited(name: str, files: dict[str, dict], seen: tuple[str, ...] = ()) -> dict:
    """The data of option ``name`` with the same-group options its ``defaults`` list names laid under it."""
    data, out = files[name], {}
    for entry in data.get("defaults") or ():
        if isinstance(entry, str) and entry in files and entry not in (*seen, name):
            out = _laid_over(out, _inherited(entry, files, (*seen, name)))
    return _laid_over(out, data)


def _laid_over(base: dict, top: dict) -> dict:
    """``top`` over ``base`` as Hydra merges a config over its defaults: mappings merge, the rest replaces."""
    out = dict(base)
    for key, value in top.items():
        both = isinstance(out.get(key), dict) and isinstance(value, dict)
        out[key] = _laid_over(out[key], value) if both else value
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


def entry_points(group: str) -> dict[str, Any]:
    """Installed entry points of ``group`` (``wfeval.metrics``, ``wfeval.decoders``) by name
    (package metadata only; nothing is imported)."""
    from importlib import metadata

    return {ep.name: ep for ep in metadata.entry_points(group=group)}


# --- the door for installed plugin packages (docs/plugins.md) ------------------------------------

#: the entry-point group of each kind: option name -> its class (a task: its config, a mapping or dataclass)
KIND_GROUPS = {"metric": "wfeval.metrics", "model": "wfeval.models", "benchmark": "wfeval.benchmarks",
               "protocol": "wfeval.protocols", "policy": "wfeval.policies", "task": "wfeval.tasks"}
#: name -> a folder inside a package (``my_plugin.conf``) holding ``<group>/<option>.yaml`` files: put on
#: Hydra's search path by ``hydra_plugins.wfeval_configs`` after wfeval's own configs
CONFIGS_GROUP = "wfeval.configs"
BUILTIN = "wfeval"


@dataclass(frozen=True)
class Offer:
    """One option of a config group as one package offers it."""

    group: str
    option: str
    dist: str  # the distribution (``wfeval`` for a built-in)
    how: str  # "entry point wfeval.models: x = mod:Cls", "config file /abs/model/x.yaml", "conf/model/x.yaml"
    target: str | None = None  # an entry point's ``module:attr``


@dataclass(frozen=True)
class PluginIndex:
    """What the installed plugin packages offer, read from their metadata and config folders only
    (nothing imported): the key of everything below is :attr:`key` (distributions, versions, entry
    points, config files)."""

    offers: tuple[Offer, ...] = ()
    config_dirs: tuple[tuple[str, str], ...] = ()  # (distribution, absolute folder), in search-path order
    broken: tuple[str, ...] = ()  # a plugin entry that cannot be read, with its package and entry point
    key: str = ""

    def by_option(self, group: str) -> dict[str, list[Offer]]:
        out: dict[str, list[Offer]] = {}
        for offer in self.offers:
            if offer.group == group:
                out.setdefault(offer.option, []).append(offer)
        return out

    def entry_point(self, group: str, option: str) -> Offer | None:
        """The entry point offering ``<group>/<option>`` (its class), when one package does."""
        return next((o for o in self.offers if o.group == group and o.option == option and o.target), None)

    def conflict(self, group: str, option: str) -> str | None:
        """Why ``<group>=<option>`` is refused when two packages offer it (wfeval's own included), else None."""
        offers = self.by_option(group).get(option, [])
        if option in builtin_option_names(group):
            offers = [Offer(group, option, BUILTIN, f"conf/{group}/{option}.yaml, built in"), *offers]
        packages = list(dict.fromkeys(o.dist for o in offers))
        if len(packages) < 2:
            return None
        first, second = ([o for o in offers if o.dist == p][0] for p in packages[:2])
        return (f"{group} '{option}' is offered by two packages: {first.dist} ({first.how}) and {second.dist} "
                f"({second.how}); wfeval does not pick one silently. Uninstall one of them, or rename the "
                "plugin's option (its entry-point name and config file).")


def builtin_option_names(group: str) -> frozenset[str]:
    """The built-in options of a group (file names of ``conf/<group>/``; nothing parsed)."""
    folder = resources.files(CONFIG_PACKAGE).joinpath(group)
    if not folder.is_dir():
        return frozenset()
    return frozenset(e.name.removesuffix(".yaml") for e in folder.iterdir() if e.name.endswith(".yaml"))


def _config_folder(value: str) -> Path | None:
    """The folder ``my_plugin.conf`` (or ``my_plugin/conf``) names, found without importing the package."""
    import importlib.util

    parts = [p for p in value.strip().replace("/", ".").split(".") if p]
    if not parts:
        return None
    try:
        spec = importlib.util.find_spec(parts[0])  # a top-level name: found, not executed
    except (ImportError, ValueError):
        return None
    for location in (spec.submodule_search_locations or []) if spec else []:
        folder = Path(location, *parts[1:])
        if folder.is_dir():
            return folder.resolve()
    return None


def _plugin_distributions() -> list[tuple[str, str, list[Any]]]:
    """(name, version, wfeval entry points) of each installed distribution that has some, wfeval's own
    left out; a name installed twice counts once (the first on the import path, as Python imports it)."""
    from importlib import metadata

    seen, out = set(), []
    wanted = {*KIND_GROUPS.values(), CONFIGS_GROUP}
    for dist in metadata.distributions():
        try:
            text = dist.read_text("entry_points.txt") or ""
            if "wfeval." not in text:
                continue
            name = str(dist.metadata["Name"] or "")
            normal = re.sub(r"[-_.]+", "-", name).lower()
            if not name or normal in seen or normal == BUILTIN:
                continue
            seen.add(normal)
            out.append((name, str(dist.version), [ep for ep in dist.entry_points if ep.group in wanted]))
        except Exception:  # noqa: BLE001 - unreadable metadata of an unrelated distribution: not a plugin
            continue
    return out


@functools.lru_cache(maxsize=1)
def installed_plugins() -> PluginIndex:
    """The plugin packages installed now (read once per process: package metadata and the file names of
    their config folders; a few milliseconds)."""
    import hashlib

    kinds = {v: k for k, v in KIND_GROUPS.items()}
    offers, dirs, broken = [], [], []
    digest = hashlib.sha256(b"wfeval plugins 1\0")
    for dist, version, eps in _plugin_distributions():
        digest.update(f"{dist}=={version}\0".encode())
        for ep in sorted(eps, key=lambda e: (e.group, e.name)):
            digest.update(f"{ep.group}:{ep.name}={ep.value}\0".encode())
            where = f"entry point {ep.group}: {ep.name} = {ep.value}"
            if ep.group == CONFIGS_GROUP:
                folder = _config_folder(ep.value)
                if folder is None:
                    broken.append(f"{dist} {version}, {where}: no such folder (a package folder holding "
                                  "<group>/<option>.yaml files)")
                    continue
                dirs.append((dist, str(folder)))
                for group_dir in sorted(p for p in folder.iterdir() if p.is_dir()):
                    for path in sorted(group_dir.glob("*.yaml")):
                        offers.append(Offer(group_dir.name, path.stem, dist, f"config file {path}"))
                        digest.update(f"{path}\0".encode() + path.read_bytes())
            elif ":" not in ep.value or not _DOTTED.fullmatch(ep.value.replace(" ", "")):
                broken.append(f"{dist} {version}, {where}: not an object reference (module:attr)")
            else:
                offers.append(Offer(kinds[ep.group], ep.name, dist, where, ep.value.replace(" ", "")))
    return PluginIndex(tuple(offers), tuple(dirs), tuple(broken), digest.hexdigest())


_DOTTED = re.compile(r"[A-Za-z_]\w*(\.[A-Za-z_]\w*)*:[A-Za-z_]\w*(\.[A-Za-z_]\w*)*")


def benchmark_targets() -> list[str]:
    """``module.Class`` of every benchmark option: the built-in files', then installed plugins' entry points."""
    found = list(builtin_targets("benchmark").values())
    found += [o.target.replace(":", ".") for o in installed_plugins().offers if o.group == "benchmark" and o.target]
    return list(dict.fromkeys(found))


def plugin_options(group: str) -> list[str]:
    """The options installed plugin packages add to a group (config files and entry points)."""
    return sorted(installed_plugins().by_option(group))


def broken_plugins_note() -> str:
    """' Installed plugins that could not be read: ...' (for an unknown option's message), or ''."""
    broken = installed_plugins().broken
    return f" Installed plugins that could not be read: {'; '.join(broken)}." if broken else ""
