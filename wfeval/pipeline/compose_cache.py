"""A plain run's composed config, kept in ``<cache>/compositions/`` (``<cache>``: ``$WFEVAL_CACHE``,
default ``~/.cache/wfeval``): composing it was the largest cost of a warm one-sample run (issue 51).

Hydra's composition is a function of what :func:`wfeval.config.compose_key.config_inputs` hashes (the command
line, the config files of every folder on the search path, wfeval's sources, the versions, the ``WFEVAL_*`` /
``HYDRA_*`` environment, the installed Hydra and wfeval plugins) and of what Hydra records of the job (the
working folder, the config name, its search path, its structured configs): the key is the sha256 of all of it,
so any change composes again. A composition is not kept when it showed a warning (one the warning filters in
force let through), when it loaded a config derived from a plugin's code
(:func:`wfeval.config.derive.plugin_code_loads`: not covered by the key), or when its search path is not the
one the key covered (a config file's ``hydra.searchpath``). The kept node is the one Hydra composed, pickled
with its schema classes referred to where wfeval serves them (:func:`wfeval.config.derive.served_class`); its
bytes are checked against the sha256 written before them, and only classes of OmegaConf, Hydra, wfeval and the
standard types are read back (anything else: composed again). The file is written by this user's wfeval into
this user's cache folder, as Python writes byte code beside the sources. A cache that cannot be read or
written costs only the time; the 32 newest entries are kept. The caller trust-checks the node as it checks a
fresh one.
"""

from __future__ import annotations

import collections
import hashlib
import io
import os
import pickle
import re
import warnings
from pathlib import Path
from typing import Any, Callable, Sequence

FORMAT = 2
KEEP = 32
#: the packages whose classes a kept node may name (and ``typing``'s forms, :func:`served_class`): no function
#: that does anything is read back
_MODULES = ("omegaconf", "hydra", "wfeval", "typing", "builtins", "collections")


def key(overrides: Sequence[str], config_name: str) -> str | None:
    """sha256 of what the composition of ``overrides`` depends on (Hydra's compose API initialized);
    None when a part cannot be read or covered (nothing is kept or read)."""
    from hydra.core.config_store import ConfigStore
    from hydra.core.global_hydra import GlobalHydra

    from wfeval.config.compose_key import config_inputs

    try:
        digest = hashlib.sha256(f"wfeval composition {FORMAT}\0{config_name}\0".encode())
        folders = []
        for source in GlobalHydra.instance().config_loader().get_sources():
            digest.update(f"{source.provider}\0{source.scheme()}://{source.path}\0".encode())
            if source.scheme() in ("file", "pkg"):
                folders.append(_folder_of(source.scheme(), source.path))
        config_inputs(digest, list(overrides), folders)
        digest.update(repr(_names(ConfigStore.instance())).encode())
        return digest.hexdigest()
    except (OSError, ImportError, ValueError, LookupError, TypeError):
        return None


def _folder_of(scheme: str, path: str) -> Path:
    """The folder of a ``file://`` or ``pkg://`` config source (ValueError: not a folder on disk)."""
    if scheme == "file":
        return Path(path)
    from importlib import resources

    folder = resources.files(path.replace("/", "."))
    if not isinstance(folder, Path) or not folder.is_dir():
        raise ValueError(f"pkg://{path} is not a folder")
    return folder


def _names(store: Any, path: str = "") -> list:
    """The names in Hydra's config store (its structured configs come from code the versions cover)."""
    from hydra.core.object_type import ObjectType

    out = []
    for name in sorted(store.list(path)):
        full = f"{path}/{name}" if path else name
        out.append((name, _names(store, full) if store.get_type(full) == ObjectType.GROUP else None))
    return out


def _run_dir(overrides: Sequence[str]) -> tuple[list[str], str | None]:
    """``overrides`` with the value of its one plain ``hydra.run.dir=<path>`` override (a path Hydra reads as
    the same string: letters, digits, ``_ . - /``, one ``/`` at least) put aside, and that value; a run
    folder given per run would otherwise never find a kept composition. The node then differs only in
    ``hydra.run.dir`` and that override's text in ``hydra.overrides.hydra`` (:func:`_with_run_dir`)."""
    given = [str(o) for o in overrides]
    at = [i for i, o in enumerate(given) if o.split("=", 1)[0].lstrip("+~") == "hydra.run.dir"]
    if len(at) != 1 or not _PLAIN_RUN_DIR.fullmatch(given[at[0]]):
        return given, None
    return [*given[:at[0]], f"hydra.run.dir={_ASIDE}", *given[at[0] + 1:]], given[at[0]].split("=", 1)[1]


_PLAIN_RUN_DIR = re.compile(r"hydra\.run\.dir=[\w.-]*/[\w./-]*", re.ASCII)
_ASIDE = "\0run dir\0"


def _with_run_dir(node: Any, old: str, new: str) -> Any:
    """The node composed with ``hydra.run.dir=<old>`` as Hydra composes it with ``hydra.run.dir=<new>``."""
    from omegaconf import open_dict, read_write

    if old != new:
        with read_write(node.hydra), open_dict(node.hydra):
            node.hydra.run.dir = new
            node.hydra.overrides.hydra = [f"hydra.run.dir={new}" if o == f"hydra.run.dir={old}" else o
                                          for o in node.hydra.overrides.hydra]
    return node


def composed(overrides: Sequence[str], config_name: str, compose: Callable[[Sequence[str]], Any]) -> Any:
    """The node ``compose(overrides)`` gives: kept from an earlier composition of the same command line but for
    its plain values (:mod:`wfeval.pipeline.compose_values`), or composed now (and kept when it may be); the
    values are then set as Hydra sets them."""
    from wfeval.config.derive import plugin_code_loads
    from wfeval.pipeline.compose_values import plain_values, with_values

    given = [str(o) for o in overrides]
    base, values = plain_values(given)
    keyed, run_dir = _run_dir(base)
    found = key(keyed, config_name)
    if found is None:
        return compose(given)
    kept = _read(_path(found))
    if kept is not None and kept[0] == run_dir:
        return with_values(kept[1], given, values, compose)
    if kept is not None and None not in (kept[0], run_dir):
        return with_values(_with_run_dir(kept[1], kept[0], run_dir), given, values, compose)
    loads = plugin_code_loads()
    with warnings.catch_warnings(record=True) as caught:  # the filters in force decide (an "error" raises here)
        node = compose(base)
        covered = _searchpath_covered(node)
        if values and not covered:  # a config file's own search path: its groups were not those the values saw
            caught.clear()
            node, values = compose(given), []
    for warning in caught:  # shown now, as they would have been
        warnings.showwarning(warning.message, warning.category, warning.filename, warning.lineno, warning.file,
                             warning.line)
    if not caught and plugin_code_loads() == loads and covered and _run_dir_as_given(node, run_dir):
        _keep(_path(found), (run_dir, node))
    return with_values(node, given, values, compose)


def _run_dir_as_given(node: Any, run_dir: str | None) -> bool:
    """Whether the given run folder is where :func:`_with_run_dir` changes it: ``hydra.run.dir`` and one
    override of ``hydra.overrides.hydra``."""
    if run_dir is None:
        return True
    return node.hydra.run.dir == run_dir and list(node.hydra.overrides.hydra).count(f"hydra.run.dir={run_dir}") == 1


def _searchpath_covered(node: Any) -> bool:
    """Whether the node was composed from the search path the key covered: the loader's sources and those
    of the command line's ``hydra.searchpath`` (a config file's own ``hydra.searchpath`` is not covered)."""
    from hydra.core.global_hydra import GlobalHydra

    loader = {(s.provider, f"{s.scheme()}://{s.path}") for s in GlobalHydra.instance().config_loader().get_sources()}
    given = {str(p) for p in node.hydra.searchpath}
    used = {(str(s.provider), f"{s.schema}://{s.path}") for s in node.hydra.runtime.config_sources}
    return all((provider, source) in loader or (provider == "hydra.searchpath in command-line" and source in given)
               for provider, source in used)


def _path(found: str) -> Path:
    from wfeval.utils.paths import cache_dir

    return cache_dir() / "compositions" / f"{found}.pickle"


class _Pickler(pickle.Pickler):
    def reducer_override(self, obj: Any) -> Any:
        from wfeval.config.derive import PICKLED_AS, served_class

        if isinstance(obj, type) and PICKLED_AS in vars(obj):
            return served_class, vars(obj)[PICKLED_AS]
        return NotImplemented


class _Unpickler(pickle.Unpickler):
    """Reads back only what a composed node is made of: OmegaConf's node classes, the data classes and enums of
    Hydra's and wfeval's configs (their generated ``__init__`` stores the fields), plain built-in values,
    ``typing``'s forms and :func:`served_class`; a file naming anything else (a function, a class whose
    construction does something) is not read."""

    def find_class(self, module: str, name: str) -> Any:
        import dataclasses
        import enum
        import inspect

        from wfeval.config.derive import served_class

        top = module.split(".")[0]
        found = super().find_class(module, name) if top in _MODULES else None
        if found is served_class or (module in ("builtins", "collections") and found in _BUILTINS) or \
                (module == "typing" and found is not None and not inspect.isroutine(found)) or \
                (top == "omegaconf" and isinstance(found, type)) or \
                (top in ("hydra", "wfeval") and isinstance(found, type) and
                 (dataclasses.is_dataclass(found) or issubclass(found, enum.Enum))):
            return found
        raise pickle.UnpicklingError(f"{module}.{name} is not read back")


_BUILTINS = (bool, int, float, complex, str, bytes, list, tuple, dict, set, frozenset, type(None),
             collections.defaultdict, collections.OrderedDict)


def _read(path: Path) -> tuple[str | None, Any] | None:
    """The kept (run folder, node); None when missing, corrupt (its bytes against the digest before them) or
    unreadable."""
    try:
        kept = path.read_bytes()
    except OSError:
        return None
    digest, data = kept[:32], kept[32:]
    if hashlib.sha256(data).digest() != digest:
        return None
    from omegaconf import DictConfig

    try:
        kept = _Unpickler(io.BytesIO(data)).load()
    except Exception:  # noqa: BLE001 - a file of another version, a class that moved: composed again
        return None
    ok = isinstance(kept, tuple) and len(kept) == 2 and isinstance(kept[0], (str, type(None))) and \
        isinstance(kept[1], DictConfig)
    return kept if ok else None


def _keep(path: Path, node: Any) -> None:
    """Keep the node (atomically); the ``KEEP`` newest are kept. Not written when it cannot be pickled."""
    from wfeval.storage.safe_io import atomic_write_bytes

    buffer = io.BytesIO()
    try:
        _Pickler(buffer, protocol=pickle.HIGHEST_PROTOCOL).dump(node)
    except Exception:  # noqa: BLE001 - a value of the config that cannot be pickled: composed every time
        return
    data = buffer.getvalue()
    try:
        atomic_write_bytes(path, hashlib.sha256(data).digest() + data, durable=False)
        kept = sorted(path.parent.glob("*.pickle"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in kept[KEEP:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass
