"""The plugin door's refusals (exit 2): a chosen option that two packages offer, a chosen plugin whose
entry point cannot be imported (:mod:`wfeval.config.plugins` lists what is installed; docs/plugins.md).
A plugin that clashes or is broken disturbs only the runs that choose it."""

from __future__ import annotations

from typing import Any, Mapping

from wfeval.config.errors import ConfigError
from wfeval.config.code import import_target
from wfeval.config.plugins import KIND_GROUPS, installed_plugins


class PluginError(ConfigError):
    """The plugin door's refusals (exit 2): a name offered by two packages, a plugin that cannot be loaded."""


class PluginConflictError(PluginError):
    """The chosen option is offered by two packages."""


class PluginLoadError(PluginError):
    """A chosen plugin's entry point cannot be imported."""


def load_plugin(group: str, option: str) -> Any:
    """The object the entry point of ``<group>/<option>`` names, imported; a plugin that cannot be
    imported is named with its package and entry point (:class:`PluginLoadError`, exit 2)."""
    offer = installed_plugins().entry_point(group, option)
    if offer is None:
        raise LookupError(f"no plugin entry point offers {group} {option!r}")
    try:
        return import_target(offer.target or "")
    except Exception as exc:  # noqa: BLE001 - any failure of the plugin's own code
        raise PluginLoadError(f"the plugin package {offer.dist} cannot be loaded: its {offer.how} raised "
                              f"{type(exc).__name__}: {exc}. Fix or uninstall that package; runs that do not "
                              f"choose {group}={option} are not affected.") from exc


def refuse_conflicts(choices: Mapping[str, Any], metric_ids: Any = ()) -> None:
    """:class:`PluginConflictError` (exit 2) when a chosen option (``model=x``, a metric) is offered by
    two packages; a plugin that clashes with an option this run does not choose is left alone."""
    index = installed_plugins()
    if not index.offers:
        return
    wanted = [(g, str(v)) for g, v in choices.items() if g in KIND_GROUPS and isinstance(v, str)]
    wanted += [("metric", str(m)) for m in metric_ids or ()]
    for group, option in wanted:
        why = index.conflict(group, option)
        if why:
            raise PluginConflictError(why)


def refuse_composed_conflicts(cfg: Any) -> None:
    """:func:`refuse_conflicts` for a config composed with its ``hydra`` node (its group choices) and
    its metrics (``metric``, ``extra_metrics``)."""
    from omegaconf import OmegaConf

    choices = OmegaConf.to_container(cfg.hydra.runtime.choices, resolve=False) if "hydra" in cfg else {}
    refuse_conflicts(choices, [*(cfg.get("metric") or {}), *(str(m) for m in cfg.get("extra_metrics") or ())])
