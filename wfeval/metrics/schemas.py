"""Structured-config schemas of the built-in metrics, derived from each metric class.

Nothing is declared twice: for every built-in metric (``conf/metric/<id>.yaml``, see
:func:`wfeval.metrics.builtins.builtin_targets`) the schema ``schema/metric/<id>`` is built
from the class's ``__init__`` signature — one field per parameter (except the class's
``internal_parameters``), with its default and its annotated type where OmegaConf can check it
(``Any`` otherwise) — plus the keys every metric
option accepts (:class:`wfeval.config.schema.MetricBaseSchema`). Importing this module stores
them in Hydra's ConfigStore, the way Hydra's own plugins carry their ``config.py``; a schema is
built only when a config loads it, from fields cached by the content of wfeval's sources
(:mod:`wfeval.metrics.schema_cache`) or, the first time, derived from the imported class.
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

from wfeval.config.schema import MetricBaseSchema, store_schema
from wfeval.metrics import schema_cache
from wfeval.metrics.builtins import builtin_targets, import_target

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


def schema_fields(cls: type, target: str) -> list[tuple[str, Any, Any]]:
    """(name, type, default) of the schema of ``cls``: ``_target_``, then one per ``__init__`` parameter."""
    try:
        hints = typing.get_type_hints(cls.__init__)
    except Exception:  # an annotation that cannot be evaluated: check the keys, not the types
        hints = {}
    fields: list[tuple[str, Any, Any]] = [("_target_", str, target)]
    for name, param in inspect.signature(cls.__init__).parameters.items():
        if (name == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD)
                or name in getattr(cls, "internal_parameters", ())):
            continue
        kind = field_type(hints.get(name, Any))
        if param.default is None and kind is not Any and typing.get_origin(kind) is not typing.Union:
            kind = Optional[kind]
        fields.append((name, kind, _plain_default(param.default)))
    return fields


def make_schema(metric_id: str, fields: list[tuple[str, Any, Any]]) -> type:
    """The dataclass schema ``<Id>Schema`` (a :class:`MetricBaseSchema`) with these fields."""
    def spec(default: Any) -> Any:
        if isinstance(default, (list, dict)):
            frozen = default.copy()
            return dataclasses.field(default_factory=lambda: frozen.copy())
        return dataclasses.field(default=default)

    name = "".join(part.title() for part in metric_id.split("_")) + "Schema"
    return dataclasses.make_dataclass(name, [(f, kind, spec(default)) for f, kind, default in fields],
                                      bases=(MetricBaseSchema,))


def schema_of(metric_id: str, cls: type, target: str) -> type:
    """A dataclass schema for ``cls``: ``_target_`` plus one field per ``__init__`` parameter."""
    return make_schema(metric_id, schema_fields(cls, target))


def builtin_schema(metric_id: str, target: str) -> type:
    """The schema of the built-in metric ``metric_id`` whose class is ``target``.

    Its fields come from the schema cache when this wfeval's sources derived them before
    (:mod:`wfeval.metrics.schema_cache`); otherwise the class is imported and the fields derived
    (and cached).
    """
    fields = schema_cache.load(metric_id, target)
    if fields is None:
        fields = schema_fields(import_target(target), target)
        schema_cache.save(metric_id, target, fields)
    return make_schema(metric_id, fields)


def register() -> None:
    """Store ``schema/metric/<id>`` for every built-in metric; a metric's class is imported only
    when a config loads its schema."""
    for metric_id, target in builtin_targets().items():
        store_schema("schema/metric", metric_id, functools.partial(builtin_schema, metric_id, target))


register()
