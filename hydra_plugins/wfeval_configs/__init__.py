"""wfeval's configs that are not files, found through Hydra's public plugin doors.

Hydra imports every module under the ``hydra_plugins`` namespace package when it starts; this one
imports nothing of wfeval until a config is loaded. Three plugins:

* :class:`WfevalConfigSource` (scheme ``wfeval://``) serves, each built the first time it is
  loaded: ``wfeval_schema`` (the primary config's schema), ``schema/<group>/<option>`` (each
  built-in option's schema, derived from its class: :mod:`wfeval.config.derive`) and
  ``metric/suite_<benchmark>`` (a built-in benchmark's metrics, from its file's ``metrics:``);
* :class:`WfevalSearchPath` puts, on the search path of wfeval's apps (those whose search path holds
  wfeval's config files), after their files: the config folders installed plugin packages declare
  (entry-point group ``wfeval.configs``: :func:`wfeval.config.plugins.installed_plugins`, read from
  package metadata, no plugin imported), then that source. The source also serves a plugin's option that
  ships no config file (its entry point: ``model/<name>`` naming the class) and its derived schema;
* :class:`WfevalFilesSource` (scheme ``wfeval-files``) serves wfeval's own config files (the package
  ``wfeval.conf``, Hydra's ``pkg://wfeval.conf``), each file's YAML parsed once a process and kept by its
  text (:mod:`wfeval.config.files`, where the cache outlives Hydra's plugin scan, which runs this module
  again): a process composes a run's config several times (the command's check, Hydra's mode, Hydra's
  run; each job of a sweep twice more), and parsing the files was a fifth of each composition. A file
  whose text changed is parsed again; each load hands out a copy. It stands on the search path just
  before ``pkg://wfeval.conf``, which stays there (Hydra's main config source): the same files, in the
  same order against every other source.
"""

from __future__ import annotations

from typing import Any, List, Optional

from hydra.core.config_search_path import ConfigSearchPath, SearchPathQuery
from hydra.core.object_type import ObjectType
from hydra.plugins.config_source import ConfigLoadError, ConfigResult, ConfigSource
from hydra.plugins.search_path_plugin import SearchPathPlugin

SCHEME = "wfeval"
FILES_SCHEME = "wfeval-files"
FILES_PACKAGE = "wfeval.conf"  # the package of wfeval's config files (wfeval.config.files.PACKAGE)
MAIN = f"pkg://{FILES_PACKAGE}"  # Hydra's main config source of wfeval's apps


def _entries() -> dict:
    """config path (no ``.yaml``) -> a function building its node: every config this source serves."""
    from wfeval.config.derive import served_configs

    return served_configs()


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


class WfevalFilesSource(ConfigSource):
    """wfeval's config files (``wfeval-files://wfeval.conf``: the files of ``pkg://wfeval.conf``), each
    file read at every load and its YAML parsed once a process for the same text
    (:func:`wfeval.config.files.parsed`)."""

    def __init__(self, provider: str, path: str) -> None:
        super().__init__(provider=provider, path=path)
        self.path = self.path.replace("/", ".").rstrip(".")

    @staticmethod
    def scheme() -> str:
        return FILES_SCHEME

    def _files(self) -> Any:
        from importlib import resources

        return resources.files(self.path)

    def load_config(self, config_path: str) -> ConfigResult:
        name = self._normalize_file_name(config_path)
        entry = self._files().joinpath(name)
        if not entry.is_file():
            raise ConfigLoadError(f"Config not found : {name}")
        text = entry.read_text(encoding="utf-8")
        from wfeval.config import files

        return ConfigResult(config=files.parsed(self.path, name, text), path=f"{FILES_SCHEME}://{self.path}",
                            provider=self.provider, header=self._get_header_dict(text[:512]))

    def available(self) -> bool:
        try:
            return self._files().joinpath("__init__.py").is_file()
        except (ValueError, ModuleNotFoundError, TypeError):
            return False

    def is_group(self, config_path: str) -> bool:
        try:
            return bool(self._files().joinpath(config_path).is_dir())
        except (ValueError, ModuleNotFoundError, TypeError):
            return False

    def is_config(self, config_path: str) -> bool:
        try:
            return bool(self._files().joinpath(self._normalize_file_name(config_path)).is_file())
        except (ValueError, ModuleNotFoundError, TypeError):
            return False

    def list(self, config_path: str, results_filter: Optional[ObjectType]) -> List[str]:
        files: List[str] = []
        for entry in self._files().joinpath(config_path).iterdir():
            self._list_add_result(files=files, file_path=f"{config_path.rstrip('/')}/{entry.name}".lstrip("/"),
                                  file_name=entry.name, results_filter=results_filter)
        return sorted(set(files))


class WfevalSearchPath(SearchPathPlugin):
    """On the search path of an app whose search path holds wfeval's config files: ``wfeval-files://`` just
    before ``pkg://wfeval.conf`` (the same files, parsed once a process), and after every file source the
    installed plugins' config folders, then ``wfeval://``."""

    def manipulate_search_path(self, search_path: ConfigSearchPath) -> None:
        paths: Any = search_path.get_path()
        if any(str(element.path) == MAIN for element in paths) and \
                not any(str(element.path).startswith(f"{FILES_SCHEME}://") for element in paths):
            search_path.prepend(provider="wfeval", path=f"{FILES_SCHEME}://{FILES_PACKAGE}",
                                anchor=SearchPathQuery(provider=None, path=MAIN))
        if any("wfeval" in str(element.path) for element in paths) and \
                not any(str(element.path).startswith(f"{SCHEME}://") for element in paths):
            from wfeval.config.plugins import installed_plugins

            for dist, folder in installed_plugins().config_dirs:
                search_path.append(provider=dist, path=f"file://{folder}")
            search_path.append(provider="wfeval", path=f"{SCHEME}://")
