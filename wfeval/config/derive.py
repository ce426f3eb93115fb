"""A plugin's config schema, derived from its class, and the registration of them all.

The schema of a built-in option ``<group>/<option>`` (stored as ``schema/<group>/<option>`` by
:func:`wfeval.config.plugins.register_schemas`) is the group's base schema — the keys the core
reads and the class never sees (:data:`wfeval.config.schema.BASE_SCHEMAS`) — plus ``_target_`` and
one field per parameter of the class's ``__init__``: its default, and its annotated type where
OmegaConf can check it (``Any`` otherwise). A class whose ``__init__`` passes ``**kwargs`` on
contributes its base class's parameters too. Left out: ``self``, ``*args``/``**kwargs`` and the
class's ``internal_parameters``. A parameter that takes a nested mapping is checked against the
dataclass, class or mapping of defaults the class names for it in ``option_schemas``
(``{"world": WorldSpec}``): its fields (``__init__`` parameters, keys) and defaults. A parameter
typed :data:`wfeval.config.code.ImportPath` takes code (its field is ``Any``):
:func:`wfeval.config.code.import_path_parameters` reads those from the same parameters
(:func:`wfeval.config.code.init_parameters`), for the trust check.

Deriving imports the class (numpy, …): the fields are cached by the content of wfeval's sources
(:mod:`wfeval.config.schema_cache`), so ``--help`` and ``--cfg job`` import no plugin once cached.
"""

from __future__ import annotations

import collections.abc
import dataclasses
import functools
import inspect
import types
import typing
from typing import Any, Dict, List, Optional

from omegaconf import MISSING

from wfeval.config import plugins, schema_cache
from wfeval.config.code import import_target, init_parameters
from wfeval.config.schema_cache import Nested

_SCALARS = (int, float, bool, str)
_SEQUENCES = (list, tuple, collections.abc.Sequence)
_MAPPINGS = (dict, collections.abc.Mapping)


def field_type(hint: Any) -> Any:
    """The OmegaConf type of a parameter annotation (``Any`` where it cannot be checked)."""
    optional = False
    if typing.get_origin(hint) in (typing.Union, types.UnionType):
        args = [a for a in typing.get_args(hint) if a is not type(None)]
        if len(args) != 1:
            return Any
        optional, hint = len(typing.get_args(hint)) == 2, args[0]
    origin, args = typing.get_origin(hint), typing.get_args(hint)
    if hint in _SCALARS:
        base: Any = hint
    elif origin in _SEQUENCES or hint in _SEQUENCES:
        base = List[args[0] if args and args[0] in _SCALARS else Any]  # type: ignore[misc]
    elif origin in _MAPPINGS or hint in _MAPPINGS:
        base = Dict[str, Any]
    else:
        return Any
    return Optional[base] if optional else base


def _plain_default(value: Any) -> Any:
    """A parameter's default as the schema keeps it: MISSING, a value, or a list / dict copy."""
    if value is inspect.Parameter.empty:
        return MISSING
    if isinstance(value, (list, tuple, dict)):
        return list(value) if not isinstance(value, dict) else dict(value)
    return value


def nested_fields(options: Any) -> tuple:
    """(name, type, default) of each field of ``options``: a dataclass, a class (its ``__init__``
    parameters), or a mapping of defaults (the type of each default; ``Any`` for ``None``)."""
    if isinstance(options, collections.abc.Mapping):
        return tuple((str(k), Any if v is None else field_type(type(v)), _plain_default(v)) for k, v in options.items())
    if not dataclasses.is_dataclass(options):
        return tuple(schema_fields(options, "")[1:])  # without _target_
    hints = typing.get_type_hints(options)
    out = []
    for f in dataclasses.fields(options):
        default = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        out.append((f.name, field_type(hints.get(f.name, Any)),
                    MISSING if default is dataclasses.MISSING else _plain_default(default)))
    return tuple(out)


def schema_fields(cls: type, target: str) -> list[tuple[str, Any, Any]]:
    """(name, type, default) of the schema of ``cls``: ``_target_``, then one per ``__init__`` parameter."""
    hints: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):
        try:
            hints.update(typing.get_type_hints(klass.__dict__["__init__"]))
        except Exception:  # no __init__ of its own, or an annotation that cannot be evaluated: keys only
            continue
    nested: dict[str, Any] = {}
    for klass in reversed(cls.__mro__):  # a subclass adds to (or overrides) its bases' nested schemas
        nested.update(klass.__dict__.get("option_schemas") or {})
    fields: list[tuple[str, Any, Any]] = [("_target_", str, target)]
    for param in init_parameters(cls):
        name = param.name
        if name in getattr(cls, "internal_parameters", ()):
            continue
        if name in nested:
            label = getattr(nested[name], "__name__", f"{cls.__name__}_{name}")
            fields.append((name, Nested(label, nested_fields(nested[name])), MISSING))
            continue
        kind = field_type(hints.get(name, Any))
        if param.default is None and kind is not Any and typing.get_origin(kind) is not typing.Union:
            kind = Optional[kind]
        fields.append((name, kind, _plain_default(param.default)))
    return fields


def _spec(kind: Any, default: Any) -> tuple[Any, Any]:
    """(type, dataclasses.field) of one schema field; nested kinds become nested dataclasses."""
    if isinstance(kind, Nested):
        inner = make_schema(kind.name, list(kind.fields), name_suffix="")
        return inner, dataclasses.field(default_factory=inner)
    if isinstance(default, (list, dict)):
        frozen = default.copy()
        return kind, dataclasses.field(default_factory=lambda: frozen.copy())
    return kind, dataclasses.field(default=default)


def make_schema(name: str, fields: list[tuple[str, Any, Any]], base: type | None = None,
                name_suffix: str = "Schema") -> type:
    """The dataclass ``<Name>Schema`` (extending ``base``) with these fields."""
    title = "".join(part[:1].upper() + part[1:] for part in name.split("_")) + name_suffix
    specs = [(f, *_spec(kind, default)) for f, kind, default in fields]
    return dataclasses.make_dataclass(title, specs, bases=(base,) if base is not None else ())


def schema_of(group: str, option: str, cls: type, target: str) -> type:
    """The schema of option ``option`` of ``group`` whose class is ``cls``."""
    from wfeval.config.schema import BASE_SCHEMAS

    return make_schema(option, schema_fields(cls, target), BASE_SCHEMAS.get(group))


def builtin_schema(group: str, option: str, target: str) -> type:
    """The schema of the built-in option ``<group>/<option>`` whose class is ``target``: its fields
    from the schema cache when these sources derived them before, else derived (and cached)."""
    from wfeval.config.schema import BASE_SCHEMAS

    fields = schema_cache.load(group, option, target)
    if fields is None:
        fields = schema_fields(import_target(target, f"{group}.{option}"), target)
        _cache_every_builtin({(group, option, target): fields})
    return make_schema(option, fields, BASE_SCHEMAS.get(group))


def _cache_every_builtin(known: dict[tuple[str, str, str], list]) -> None:
    """On a cache miss, derive every built-in option's fields at once (a third of a second: the
    plugin classes import numpy, nothing heavier) and cache them, so that no later ``--help`` or
    ``--cfg job`` of these sources imports a plugin, whichever options it picks. An option whose
    class cannot be imported (a family whose package is not installed) is derived when asked for."""
    entries = dict(known)
    for group in plugins.CLASS_GROUPS:
        for option, target in plugins.builtin_targets(group).items():
            if (group, option, target) in entries:
                continue
            try:
                entries[(group, option, target)] = schema_fields(import_target(target, f"{group}.{option}"), target)
            except Exception:  # noqa: BLE001 - derived (and its error shown) when a config loads it
                continue
    schema_cache.save_many(entries)


def register_schemas() -> None:
    """Make sure Hydra knows wfeval's config source and its search-path entry
    (``hydra_plugins.wfeval_configs``, which serve the derived schemas and the metric suites, each
    built when a config first loads it): Hydra's plugin discovery finds them in an installed wheel, but
    not through an editable install's import hook, so they are registered through Hydra's public
    ``Plugins.register`` as well (idempotent). Call before composing."""
    from hydra.core.plugins import Plugins

    from hydra_plugins.wfeval_configs import WfevalConfigSource, WfevalSearchPath

    plugins = Plugins.instance()
    for plugin in (WfevalConfigSource, WfevalSearchPath):
        plugins.register(plugin)


@functools.lru_cache(maxsize=None)
def served_configs() -> dict[str, "Served"]:
    """Every config wfeval serves that is not a file, by config path: ``wfeval_schema`` (the primary
    config's schema), ``schema/<group>/<option>`` (each built-in option's derived schema) and
    ``metric/suite_<benchmark>`` (a built-in benchmark's metrics); each a function building its node
    (built once, a copy handed out per load)."""
    from wfeval.config.schema import WfevalSchema

    out: dict[str, Served] = {"wfeval_schema": Served("wfeval_schema", WfevalSchema)}
    for group in plugins.CLASS_GROUPS:
        for option, target in plugins.builtin_targets(group).items():
            name = f"schema/{group}/{option}"
            out[name] = Served(name, functools.partial(builtin_schema, group, option, target))
    for benchmark in plugins.option_files("benchmark"):
        out[f"metric/suite_{benchmark}"] = Served(f"metric/suite_{benchmark}", functools.partial(_suite, benchmark))
    index = plugins.installed_plugins()
    with_files = {(o.group, o.option) for o in index.offers if o.target is None}
    for offer in index.offers:  # a plugin's entry point: its schema, and its option when it ships no file
        group, option = offer.group, offer.option
        if offer.target is None or option in plugins.builtin_option_names(group):
            continue  # a clash with a built-in: refused when chosen (plugins.refuse_conflicts)
        if group in plugins.CLASS_GROUPS:
            name = f"schema/{group}/{option}"
            out.setdefault(name, Served(name, functools.partial(_plugin_schema, group, option), plugin=True))
        if (group, option) not in with_files:
            out.setdefault(f"{group}/{option}", Served(f"{group}/{option}", functools.partial(
                _plugin_option, group, option), package=f"metric.{option}" if group == "metric" else None,
                plugin=True))
    return out


class Served:
    """One served config: its node built from ``source`` (a dataclass, or a function returning a
    dataclass or a mapping) the first time it is loaded; each load hands out a copy. ``plugin``: built
    from an installed plugin's code (its loads are counted: :func:`plugin_code_loads`)."""

    def __init__(self, name: str, source: Any, package: str | None = None, plugin: bool = False) -> None:
        self.name, self.source, self.node, self.package, self.plugin = name, source, None, package, plugin
        self.value: Any = None

    def built(self) -> Any:
        """What ``source`` gives (built once): a schema class, tagged for pickling (:func:`served_class`)."""
        if self.value is None:
            self.value = self.source if isinstance(self.source, type) else self.source()
            if isinstance(self.value, type):
                _tag(self.value, self.name, ())
        return self.value

    def __call__(self) -> Any:
        import copy

        from omegaconf import OmegaConf

        if self.plugin:
            _PLUGIN_LOADS[0] += 1
        if self.node is None:
            try:
                value = self.built()
                self.node = OmegaConf.create(value) if isinstance(value, dict) else OmegaConf.structured(value)
            except AttributeError as exc:  # would read as a missing attribute inside Hydra
                raise RuntimeError(f"building the wfeval config {self.name}: {exc}") from exc
        return copy.deepcopy(self.node)


_PLUGIN_LOADS = [0]
#: the attribute of a served schema class (or a class nested in one) that says how to find it again
PICKLED_AS = "__wfeval_served__"


def plugin_code_loads() -> int:
    """How many times this process loaded a config derived from a plugin's code (its class or its entry
    point's config): what a cache keyed on config files and package metadata cannot see change."""
    return _PLUGIN_LOADS[0]


def _tag(cls: type, name: str, path: tuple[str, ...]) -> None:
    """Tag ``cls`` and every dataclass its fields hold that cannot be imported by name (made at run time:
    ``dataclasses.make_dataclass``) with where it is served, so that a pickled node refers to it by
    that place (:func:`served_class`) rather than by a name no module holds."""
    import sys

    if getattr(sys.modules.get(cls.__module__), cls.__qualname__, None) is not cls:
        setattr(cls, PICKLED_AS, (name, path))
    hints = typing.get_type_hints(cls) if dataclasses.is_dataclass(cls) else {}
    for field_name, kind in hints.items():
        if isinstance(kind, type) and dataclasses.is_dataclass(kind):
            _tag(kind, name, (*path, field_name))


def served_class(name: str, path: tuple[str, ...]) -> type:
    """The schema class served as ``name`` (:func:`served_configs`; built as a composition builds it), or
    the class of its field ``path``: how a pickled composed node finds the classes it was composed from."""
    cls = served_configs()[name].built()
    for field_name in path:
        cls = typing.get_type_hints(cls)[field_name]
    if not isinstance(cls, type):
        raise TypeError(f"{name} {'.'.join(path)}: not a class")
    return cls


def _suite(benchmark: str) -> dict[str, Any]:
    """``metric/suite_<benchmark>``: the benchmark's metrics, each from its own config file."""
    return {"defaults": [*(plugins.benchmark_metrics(benchmark) or ()), "_self_"]}


def _plugin_schema(group: str, option: str) -> type:
    """``schema/<group>/<option>`` of a plugin's entry point: derived from its class, as a built-in's is."""
    from wfeval.config.plugin_refusals import load_plugin

    offer = plugins.installed_plugins().entry_point(group, option)
    target = (offer.target or "").replace(":", ".") if offer else ""
    return schema_of(group, option, load_plugin(group, option), target)


def _plugin_option(group: str, option: str) -> dict[str, Any]:
    """``<group>/<option>`` of a plugin that ships no config file: its entry point's class with its
    defaults (its schema first); a task's entry point names its config (a mapping or a dataclass)."""
    if group == "task":
        from wfeval.config.plugin_refusals import load_plugin

        value = load_plugin(group, option)
        return dict(dataclasses.asdict(value) if dataclasses.is_dataclass(value) else value)
    offer = plugins.installed_plugins().entry_point(group, option)
    node: dict[str, Any] = {"_target_": (offer.target or "").replace(":", ".") if offer else ""}
    if group in plugins.CLASS_GROUPS:
        node = {"defaults": [f"/schema/{group}/{option}@_here_", "_self_"], **node}
    if group == "protocol":
        node["name"] = option
    return node
