"""wfeval's configs that are not files, found through Hydra's public plugin doors.

Hydra imports every module under the ``hydra_plugins`` namespace package when it starts; this one
imports nothing of wfeval until a config is loaded. Two plugins (wfeval's own config files are Hydra's
``pkg://wfeval.conf``, read by Hydra's own source: a command composes its config once,
:mod:`wfeval.pipeline.compose`):

* :class:`WfevalConfigSource` (scheme ``wfeval://``) serves, each built the first time it is
  loaded: ``wfeval_schema`` (the primary config's schema), ``schema/<group>/<option>`` (each
  built-in option's schema, derived from its class: :mod:`wfeval.config.derive`) and
  ``metric/suite_<benchmark>`` (a built-in benchmark's metrics, from its file's ``metrics:``),
  ``added_metrics/<protocol|task>/<name>`` (the metrics a built-in protocol or task adds, composed under
  ``metric._added_``: :func:`wfeval.metrics.selection.added_metric_configs`);
* :class:`WfevalSearchPath` puts, on the search path of wfeval's apps (those whose search path holds
  wfeval's config files), after their files: the config folders installed plugin packages declare
  (entry-point group ``wfeval.configs``: :func:`wfeval.config.plugins.installed_plugins`, read from
  package metadata, no plugin imported), then that source. The source also serves a plugin's option that
  ships no config file (its entry point: ``model/<name>`` naming the class) and its derived schema.
"""

from __future__ import annotations

from typing import Any, List, Optional

from hydra.core.config_search_path import ConfigSearchPath
from hydra.core.object_type import ObjectType
from hydra.plugins.config_source import ConfigLoadError, ConfigResult, ConfigSource
from hydra.plugins.search_path_plugin import SearchPathPlugin

SCHEME = "wfeval"


def _entries() -> dict:
    """config path (no ``.yaml``) -> a function building its node: every config this source serves."""
    from wfeval.config.derive import served_configs
    from wfeval.metrics.selection import added_metric_configs

    return {**served_configs(), **added_metric_configs()}


class WfevalConfigSource(ConfigSource):
    """The configs of :func:`wfeval.config.derive.served_configs`, each built when first loaded."""

    @staticmethod
    def scheme() -> str:
        return SCHEME

    def load_config(self, config_path: str) -> ConfigResult:
        name = config_path.removesuffix(".yaml")
        build = _entries().get(name)
        if build is None:
            raise ConfigLoadError(f"{SCHEME}://: no config {name}")
        return ConfigResult(config=build(), path=f"{SCHEME}://{self.path}", provider=self.provider,
                            header={"package": getattr(build, "package", None)})

    def available(self) -> bool:
        return True

    def is_group(self, config_path: str) -> bool:
        prefix = config_path.strip("/")
        return prefix == "" or any(name.startswith(prefix + "/") for name in _entries())

    def is_config(self, config_path: str) -> bool:
        return config_path.strip("/").removesuffix(".yaml") in _entries()

    def list(self, config_path: str, results_filter: Optional[ObjectType]) -> List[str]:
        prefix = config_path.strip("/")
        start = f"{prefix}/" if prefix else ""
        children = {name[len(start):].split("/", 1)[0] for name in _entries() if name.startswith(start)}
        found: List[str] = []
        for child in children:
            path = f"{start}{child}"
            if self.is_group(path) and results_filter in (None, ObjectType.GROUP):
                found.append(child)
            if self.is_config(path) and results_filter in (None, ObjectType.CONFIG):
                found.append(child)
        return sorted(set(found))


class WfevalSearchPath(SearchPathPlugin):
    """On the search path of an app whose search path holds wfeval's config files: after every file source
    the installed plugins' config folders, then ``wfeval://``."""

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        paths: Any = search_path.get_path()
        if any("wfeval" in str(element.path) for element in paths) and \
                not any(str(element.path).startswith(f"{SCHEME}://") for element in paths):
            from wfeval.config.plugins import installed_plugins

            for dist, folder in installed_plugins().config_dirs:
                search_path.append(provider=dist, path=f"file://{folder}")
            search_path.append(provider="wfeval", path=f"{SCHEME}://")
