"""Structured-config schemas of the built-in metrics, derived from each metric class.

Nothing is declared twice: for every built-in metric (``conf/metric/<id>.yaml``, see
:func:`wfeval.metrics.builtins.builtin_targets`) the schema ``schema/metric/<id>`` is built
from the class's ``__init__`` signature — one field per parameter (except the class's
``internal_parameters``), with its default and its annotated type where OmegaConf can check it
(``Any`` otherwise) — plus the keys every metric
option accepts (:class:`wfeval.config.schema.MetricBaseSchema`). Importing this module stores
them in Hydra's ConfigStore, the way Hydra's own plugins carry their ``config.py``; a schema is
derived (and its metric module imported) only when a config loads it.
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


def _default(value: Any) -> Any:
    if value is inspect.Parameter.empty:
        return MISSING
    if isinstance(value, (list, tuple, dict)):
        frozen = list(value) if not isinstance(value, dict) else dict(value)
        return dataclasses.field(default_factory=lambda: frozen.copy())
    return value


def schema_of(metric_id: str, cls: type, target: str) -> type:
    """A dataclass schema for ``cls``: ``_target_`` plus one field per ``__init__`` parameter."""
    try:
        hints = typing.get_type_hints(cls.__init__)
    except Exception:  # an annotation that cannot be evaluated: check the keys, not the types
        hints = {}
    fields: list[tuple[str, Any, Any]] = [("_target_", str, dataclasses.field(default=target))]
    for name, param in inspect.signature(cls.__init__).parameters.items():
        if (name == "self" or param.kind in (param.VAR_POSITIONAL, param.VAR_KEYWORD)
                or name in getattr(cls, "internal_parameters", ())):
            continue
        default = _default(param.default)
        kind = field_type(hints.get(name, Any))
        if param.default is None and kind is not Any and typing.get_origin(kind) is not typing.Union:
            kind = Optional[kind]
        fields.append((name, kind, default if isinstance(default, dataclasses.Field) else dataclasses.field(
            default=default)))
    name = "".join(part.title() for part in metric_id.split("_")) + "Schema"
    return dataclasses.make_dataclass(name, fields, bases=(MetricBaseSchema,))


def builtin_schema(metric_id: str, target: str) -> type:
    """The schema of the built-in metric ``metric_id`` whose class is ``target`` (imports the class)."""
    return schema_of(metric_id, import_target(target), target)


def register() -> None:
    """Store ``schema/metric/<id>`` for every built-in metric; a metric's class is imported only
    when a config loads its schema."""
    for metric_id, target in builtin_targets().items():
        store_schema("schema/metric", metric_id, functools.partial(builtin_schema, metric_id, target))


register()
