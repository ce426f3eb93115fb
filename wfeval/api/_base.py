"""Shared machinery for the frozen contract records: validation, coercion, dict round trips."""
from __future__ import annotations

import dataclasses
import difflib
import numbers
import sys
import types
import typing
from collections.abc import Mapping, Sequence
from types import MappingProxyType
from typing import Any, Callable, ClassVar, TypeVar, Union

R = TypeVar("R", bound="Record")
_NONE = type(None)
_HINTS: dict[type, dict[str, Any]] = {}


class ContractError(ValueError, TypeError):
    """Invalid data for a contract record; the message names the class and the field."""


def describe(value: Any) -> str:
    """``"type (repr)"`` with the repr shortened, for error messages."""
    text = repr(value)
    if len(text) > 80:
        text = text[:77] + "..."
    return f"{type(value).__name__} ({text})"


def fail(where: str, expected: str, value: Any) -> ContractError:
    """Build the standard ``"Where: expected X, got T (repr)"`` error."""
    return ContractError(f"{where}: expected {expected}, got {describe(value)}")


_PLAIN = frozenset({str, int, float, bool, type(None)})  # exact types that freeze and thaw to themselves
_MAPS = frozenset({dict, MappingProxyType})
_SEQS = frozenset({list, tuple})


def freeze(value: Any) -> Any:
    """Deep-freeze: mappings become read-only proxies, lists/tuples become tuples."""
    kind = type(value)  # the common exact types first (the same result, without ABC checks)
    if kind in _PLAIN:
        return value
    if kind in _MAPS:
        return MappingProxyType({k: freeze(v) for k, v in value.items()})
    if kind in _SEQS:
        return tuple(freeze(v) for v in value)
    if isinstance(value, Record):
        return value
    if isinstance(value, Mapping):
        return MappingProxyType({k: freeze(v) for k, v in value.items()})
    if isinstance(value, (list, tuple)):
        return tuple(freeze(v) for v in value)
    return value


def thaw(value: Any) -> Any:
    """Inverse of :func:`freeze`: plain dicts/lists, nested records as dicts."""
    kind = type(value)
    if kind in _PLAIN:
        return value
    if kind in _MAPS:
        return {k: thaw(v) for k, v in value.items()}
    if kind in _SEQS:
        return [thaw(v) for v in value]
    if isinstance(value, Record):
        return value.to_dict()
    if isinstance(value, Mapping):
        return {k: thaw(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [thaw(v) for v in value]
    return value


def _name(hint: Any) -> str:
    return hint.__name__ if isinstance(hint, type) else str(hint).replace("typing.", "")


_SHAPES: dict[Any, tuple[Any, tuple[Any, ...]]] = {}


def _shape(hint: Any) -> tuple[Any, tuple[Any, ...]]:
    """``(typing.get_origin(hint), typing.get_args(hint))``, computed once per annotation."""
    try:
        return _SHAPES[hint]
    except KeyError:
        shape = _SHAPES[hint] = (typing.get_origin(hint), typing.get_args(hint))
        return shape
    except TypeError:  # an unhashable annotation
        return typing.get_origin(hint), typing.get_args(hint)


def coerce(where: str, hint: Any, value: Any) -> Any:
    """Validate ``value`` against the annotation ``hint`` and return its stored form."""
    origin, args = _shape(hint)
    if hint is Any:
        return freeze(value)
    if origin is Union or origin is types.UnionType:
        inner = [a for a in args if a is not _NONE]
        if value is None:
            return MappingProxyType({}) if typing.get_origin(inner[0]) is Mapping else None
        return coerce(where, inner[0], value)
    if hint is bool or hint is str:
        if isinstance(value, hint):
            return value
        raise fail(where, hint.__name__, value)
    if hint is int or hint is float:
        kind = numbers.Integral if hint is int else numbers.Real
        if isinstance(value, kind) and not isinstance(value, bool):
            return hint(value)
        raise fail(where, hint.__name__, value)
    if origin is tuple:
        if isinstance(value, (str, bytes)) or not isinstance(value, Sequence):
            raise fail(where, f"sequence of {_name(args[0])}", value)
        return tuple(coerce(f"{where}[{i}]", args[0], v) for i, v in enumerate(value))
    if origin is Mapping:
        if not isinstance(value, Mapping):
            raise fail(where, "mapping", value)
        out = {}
        for key, item in value.items():
            if not isinstance(key, str):
                raise fail(f"{where} key", "str", key)
            out[key] = coerce(f"{where}[{key!r}]", args[1], item)
        return MappingProxyType(out)
    if isinstance(hint, type) and issubclass(hint, Record):
        if isinstance(value, hint):
            return value
        if isinstance(value, Mapping):
            try:
                return hint.from_dict(value)
            except ContractError as exc:
                raise ContractError(f"{where}: {exc}") from None
        raise fail(where, f"{hint.__name__} or mapping", value)
    raise TypeError(f"{where}: unsupported annotation {hint!r}")  # programming error


def _field_hints(cls: type) -> dict[str, Any]:
    """Evaluate the dataclass field annotations (get_type_hints chokes on InitVar on 3.10)."""
    hints = {}
    for f in dataclasses.fields(cls):
        owner = next(c for c in cls.__mro__ if f.name in vars(c).get("__annotations__", {}))
        hint = f.type
        if isinstance(hint, str):
            hint = eval(hint, vars(sys.modules[owner.__module__]))  # noqa: S307
        hints[f.name] = hint
    return hints


def aliased(canonical: str, alias: str) -> Callable[[type[R]], type[R]]:
    """Class decorator: ``alias`` is an init-only spelling of ``canonical`` and a read-only property."""

    def decorate(cls: type[R]) -> type[R]:
        def getter(self: Any) -> str:
            return getattr(self, canonical)

        cls._alias = (canonical, alias)
        setattr(cls, alias, property(getter, doc=f"Alias of ``{canonical}``."))
        return cls

    return decorate


_SPECS: dict[type, tuple[tuple[str, str, Any], ...]] = {}
_KEYS: dict[type, tuple[frozenset[str], frozenset[str]]] = {}


def _spec(cls: type) -> tuple[tuple[str, str, Any], ...]:
    """Per field of a record class, once: its name, where an error names it, its annotation."""
    spec = _SPECS.get(cls)
    if spec is None:
        hints = _HINTS.get(cls) or _HINTS.setdefault(cls, _field_hints(cls))
        spec = _SPECS[cls] = tuple((f.name, f"{cls.__name__}.{f.name}", hints[f.name])
                                   for f in dataclasses.fields(cls))
    return spec


def _keys(cls: Any) -> tuple[frozenset[str], frozenset[str]]:
    """The keys :meth:`Record.from_dict` accepts and those it requires, once per class."""
    keys = _KEYS.get(cls)
    if keys is None:
        required = {f.name for f in dataclasses.fields(cls)
                    if f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING}
        keys = _KEYS[cls] = (frozenset(cls.init_keys()), frozenset(required))
    return keys


class Record:
    """Base of the frozen contract dataclasses: validates and deep-freezes on construction."""

    _alias: ClassVar[tuple[str, str] | None] = None
    _required: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self, *alias_value: Any) -> None:
        cls = type(self)
        if cls._alias is not None:
            self._resolve_alias(*alias_value)
        for name, where, hint in _spec(cls):
            object.__setattr__(self, name, coerce(where, hint, getattr(self, name)))
        for name in cls._required:
            if not getattr(self, name):
                raise ContractError(f"{cls.__name__}.{name}: must be a non-empty string")
        self._check()

    def _resolve_alias(self, alias_value: Any = None) -> None:
        canonical, alias = type(self)._alias  # type: ignore[misc]
        owner, value = type(self).__name__, getattr(self, canonical)
        for name, given in ((canonical, value), (alias, alias_value)):
            if given is not None and (not isinstance(given, str) or not given):
                raise fail(f"{owner}.{name}", "non-empty str", given)
        if value is not None and alias_value is not None and value != alias_value:
            raise ContractError(
                f"{owner}: {canonical} ({value!r}) and {alias} ({alias_value!r}) disagree; give one of them"
            )
        if value is None and alias_value is None:
            raise ContractError(f"{owner}: one of {canonical} / {alias} is required")
        object.__setattr__(self, canonical, value if value is not None else alias_value)

    def _check(self) -> None:
        """Hook for cross-field / value-range checks; raise :class:`ContractError`."""

    def to_dict(self) -> dict[str, Any]:
        """Plain, JSON-friendly dict in field order (canonical spellings only)."""
        return {name: thaw(getattr(self, name)) for name, _, _ in _spec(type(self))}

    @classmethod
    def init_keys(cls) -> list[str]:
        """Keys accepted by :meth:`from_dict`: the fields plus the alias, in order."""
        keys = [f.name for f in dataclasses.fields(cls) if f.init]  # type: ignore[arg-type]
        if cls._alias is not None:
            keys.insert(keys.index(cls._alias[0]) + 1, cls._alias[1])
        return keys

    @classmethod
    def check_keys(cls, data: Any, where: str) -> None:
        """Reject non-mappings, unknown keys (with suggestions) and missing required keys."""
        if not isinstance(data, Mapping):
            raise fail(where, "mapping", data)
        valid, required = _keys(cls)
        if required.issubset(data) and valid.issuperset(data):  # the common case, said at once
            return
        valid = cls.init_keys()
        problems = []
        for key in data:
            if key in valid:
                continue
            close = difflib.get_close_matches(str(key), valid, n=3)
            hint = f"Did you mean: {', '.join(close)}?" if close else f"Valid keys: {', '.join(valid)}"
            problems.append(f"unknown key {key!r}. {hint}")
        for f in dataclasses.fields(cls):  # type: ignore[arg-type]
            no_default = f.default is dataclasses.MISSING and f.default_factory is dataclasses.MISSING
            if no_default and f.name not in data:
                problems.append(f"missing required key {f.name!r}")
        if problems:
            raise ContractError(f"{where}: " + "; ".join(problems))

    @classmethod
    def from_dict(cls: type[R], data: Mapping[str, Any]) -> R:
        """Strict inverse of :meth:`to_dict`; accepts the alias spelling too."""
        cls.check_keys(data, f"{cls.__name__}.from_dict")
        return cls(**data)

    def __reduce__(self) -> tuple[Any, ...]:
        # Read-only mappings are not picklable; rebuild from the plain dict instead.
        return (type(self).from_dict, (self.to_dict(),))
