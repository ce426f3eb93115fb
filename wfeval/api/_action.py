"""The action space a benchmark declares: discrete ids or continuous vectors (shape, dtype, bounds).

A benchmark declares it on its :class:`~wfeval.api.BenchmarkSpec` (``action_space``) and hands it
to models, policies and metrics in every request as ``controls["action_space"]`` (its
:meth:`~Record.to_dict`), beside ``controls["actions"]``. Benchmarks that declare none (the
built-in games) have discrete actions: ids into ``controls["action_names"]``.
:func:`action_space_of` reads a request's, and says what an undeclared one holds.

Pure Python (no numpy): the contracts stay dependency-free. Values are checked by
:meth:`ActionSpace.problem`, which accepts nested lists, tuples and numpy arrays alike.
"""
from __future__ import annotations

import math
import numbers
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ._base import ContractError, Record
from ._schema import ACTION_SPACE_SCHEMA_VERSION

ACTION_KINDS = ("continuous", "discrete")
FLOAT_DTYPES = ("float16", "float32", "float64")
INT_DTYPES = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32")


@dataclass(frozen=True)
class ActionSpace(Record):
    """What one action is.

    ``kind="continuous"``: a vector (``shape``, e.g. ``(2,)``) of ``dtype`` floats, each element
    within ``[low, high]`` (one bound per element, or one for all; empty: unbounded), ``names``
    one per element of a 1-D shape. ``kind="discrete"``: an integer id in ``[0, n)``, ``names``
    one per action.
    """

    kind: str = "continuous"
    shape: tuple[int, ...] = ()
    dtype: str = "float32"
    low: tuple[float, ...] = ()
    high: tuple[float, ...] = ()
    n: int = 0
    names: tuple[str, ...] = ()
    metadata: Mapping[str, Any] = field(default_factory=dict)
    schema_version: str = ACTION_SPACE_SCHEMA_VERSION

    _required = ("kind", "dtype", "schema_version")

    # -- construction -----------------------------------------------------------------------------

    @classmethod
    def continuous(cls, shape: Sequence[int], *, low: Any = None, high: Any = None, dtype: str = "float32",
                   names: Sequence[str] = (), metadata: Mapping[str, Any] | None = None) -> ActionSpace:
        """A continuous space; ``low``/``high``: a number (every element) or one per element, None: unbounded."""
        return cls(kind="continuous", shape=tuple(shape), dtype=dtype, low=_bounds(low), high=_bounds(high),
                   names=tuple(names), metadata=dict(metadata or {}))

    @classmethod
    def discrete(cls, n: int | None = None, names: Sequence[str] = ()) -> ActionSpace:
        """A discrete space of ``n`` ids (``n`` defaults to the number of ``names``)."""
        return cls(kind="discrete", shape=(), dtype="int64", n=int(n if n is not None else len(names)),
                   names=tuple(names))

    def _check(self) -> None:
        where = "ActionSpace"
        if self.kind not in ACTION_KINDS:
            raise ContractError(f"{where}.kind: expected one of {ACTION_KINDS}, got {self.kind!r}")
        if any(d < 1 for d in self.shape):
            raise ContractError(f"{where}.shape: every dimension must be >= 1, got {list(self.shape)}")
        if self.kind == "discrete":
            if self.dtype not in INT_DTYPES:
                raise ContractError(f"{where}.dtype: a discrete space holds integer ids ({', '.join(INT_DTYPES)}), "
                                    f"got {self.dtype!r}")
            if self.shape or self.low or self.high:
                raise ContractError(f"{where}: a discrete space has no shape or bounds (ids in [0, n))")
            if self.n < 1:
                raise ContractError(f"{where}.n: a discrete space needs n >= 1 actions, got {self.n}")
            if self.names and len(self.names) != self.n:
                raise ContractError(f"{where}.names: {len(self.names)} names for n={self.n} actions")
            return
        if self.dtype not in FLOAT_DTYPES:
            raise ContractError(f"{where}.dtype: a continuous space holds floats ({', '.join(FLOAT_DTYPES)}), "
                                f"got {self.dtype!r}")
        if self.n:
            raise ContractError(f"{where}.n: only a discrete space has n (got {self.n} for a continuous one)")
        size = self.size
        for name in ("low", "high"):
            values = getattr(self, name)
            if len(values) not in (0, 1, size):
                raise ContractError(f"{where}.{name}: give one bound, or one per element ({size} for shape "
                                    f"{list(self.shape)}), or none; got {len(values)}")
            if not all(math.isfinite(v) for v in values):
                raise ContractError(f"{where}.{name}: bounds must be finite numbers (leave it empty for an "
                                    f"unbounded space), got {list(values)}")
        if bool(self.low) != bool(self.high):
            raise ContractError(f"{where}: give both low and high, or neither")
        lows, highs = self.bounds() or ((), ())
        bad = [i for i, (lo, hi) in enumerate(zip(lows, highs)) if lo > hi]
        if bad:
            raise ContractError(f"{where}: low > high at element(s) {bad}")
        if self.names and (len(self.shape) != 1 or len(self.names) != size):
            raise ContractError(f"{where}.names: one name per element of a 1-D shape; got {len(self.names)} "
                                f"for shape {list(self.shape)}")

    # -- what it is ---------------------------------------------------------------------------------

    @property
    def is_continuous(self) -> bool:
        return self.kind == "continuous"

    @property
    def size(self) -> int:
        """Elements in one action (1 for a discrete id)."""
        return math.prod(self.shape) if self.shape else 1

    @property
    def bounded(self) -> bool:
        return bool(self.low)

    def bounds(self) -> tuple[tuple[float, ...], tuple[float, ...]] | None:
        """(low, high), one per element of the flattened action; None when unbounded (or discrete)."""
        if not self.low:
            return None
        n = self.size
        low = self.low * n if len(self.low) == 1 else self.low
        high = self.high * n if len(self.high) == 1 else self.high
        return tuple(low), tuple(high)

    def describe(self) -> str:
        """One line for messages and reports: ``continuous (2,) float32 in [-1, 1]`` / ``discrete 5``."""
        if not self.is_continuous:
            return f"discrete, {self.n} action(s)" + (f": {', '.join(self.names)}" if self.names else "")
        text = f"continuous {tuple(self.shape)} {self.dtype}"
        found = self.bounds()
        if found is None:
            return text + ", unbounded"
        low, high = found
        if len(set(low)) == 1 and len(set(high)) == 1:
            return text + f" in [{low[0]:g}, {high[0]:g}]"
        return text + " in " + ", ".join(f"[{lo:g}, {hi:g}]" for lo, hi in zip(low, high))

    # -- checking values ----------------------------------------------------------------------------

    def problem(self, actions: Any, *, first: int = 0) -> str | None:
        """Why ``actions`` (a sequence of actions: nested lists, tuples or a numpy array) do not
        belong to this space — wrong shape, a non-number, NaN/infinity, outside the bounds, an id
        out of range — naming the first bad action (numbered from ``first``); None when they do."""
        if isinstance(actions, (str, bytes, Mapping)) or not _is_sequence(actions):
            return f"actions must be a list of actions, got {type(actions).__name__}"
        found = self.bounds()
        for t, action in enumerate(actions, start=first):
            if not self.is_continuous:
                why = _discrete_problem(action, self.n)
            else:
                flat, shape = _flatten(action)
                if flat is None:
                    why = shape  # the reason
                elif tuple(shape) != tuple(self.shape):
                    why = f"has shape {tuple(shape)}; the action space is {tuple(self.shape)}"
                else:
                    why = _value_problem(flat, found, self.names)
            if why:
                return f"action {t} {why}"
        return None


def _bounds(value: Any) -> tuple[float, ...]:
    if value is None:
        return ()
    if isinstance(value, numbers.Real):
        return (float(value),)
    return tuple(float(v) for v in value)


def _is_sequence(value: Any) -> bool:
    return isinstance(value, Sequence) or (hasattr(value, "__len__") and hasattr(value, "__getitem__")
                                           and hasattr(value, "shape"))


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or type(value).__name__ == "bool_":
        return None
    if isinstance(value, numbers.Real):
        return float(value)
    return None


def _flatten(action: Any) -> tuple[list[float] | None, Any]:
    """(flat floats, shape) of one action, or (None, the reason it is not an array of numbers)."""
    if hasattr(action, "tolist") and hasattr(action, "shape"):  # a numpy array or scalar
        action = action.tolist()
    number = _number(action)
    if number is not None:
        return [number], ()
    if isinstance(action, (str, bytes, Mapping)) or not isinstance(action, Sequence):
        return None, f"is a {type(action).__name__}, not a number or a vector of numbers"
    if not action:
        return None, "is an empty list"
    parts = [_flatten(a) for a in action]
    for flat, why in parts:
        if flat is None:
            return None, why
    shapes = {tuple(shape) for _, shape in parts}
    if len(shapes) > 1:
        return None, f"is ragged (element shapes {sorted(shapes)})"
    return [v for flat, _ in parts for v in flat], (len(action), *shapes.pop())


def _value_problem(flat: list[float], bounds: tuple[tuple[float, ...], tuple[float, ...]] | None,
                   names: Sequence[str]) -> str | None:
    for i, v in enumerate(flat):
        label = f"element {i}" + (f" ({names[i]})" if i < len(names) else "")
        if not math.isfinite(v):
            return f"{label} is {v!r}; actions must be finite"
        if bounds is not None and not bounds[0][i] <= v <= bounds[1][i]:
            return f"{label} = {v:g} is outside the declared bounds [{bounds[0][i]:g}, {bounds[1][i]:g}]"
    return None


def _discrete_problem(action: Any, n: int) -> str | None:
    if hasattr(action, "tolist") and hasattr(action, "shape"):
        action = action.tolist()
    value = _number(action)
    if value is None or not float(value).is_integer():
        return f"is {action!r}; a discrete action is an integer id in [0, {n})"
    if not 0 <= value < n:
        return f"is {int(value)}; a discrete action is an id in [0, {n})"
    return None


def action_space_of(request: Any) -> ActionSpace | None:
    """The action space of a :class:`~wfeval.api.GenerationRequest`: the declared
    ``controls["action_space"]``; else, for a request whose actions are vectors, a continuous space
    of their shape (unbounded, ``metadata={"declared": False}``); else, when it names its actions
    (``controls["action_names"]``), discrete ids into them; else None (scalar ids, no names).
    A malformed declaration raises :class:`ContractError` naming the field."""
    controls = getattr(request, "controls", None) or {}
    declared = controls.get("action_space")
    if declared is not None:
        if isinstance(declared, ActionSpace):
            return declared
        if not isinstance(declared, Mapping):
            raise ContractError(f"controls['action_space']: expected a mapping, got {type(declared).__name__}")
        return ActionSpace.from_dict(declared)
    actions = controls.get("actions")
    if _is_sequence(actions) and not isinstance(actions, (str, bytes)) and len(actions):
        flat, shape = _flatten(actions[0])
        if flat is not None and shape:
            return ActionSpace(kind="continuous", shape=tuple(shape), dtype="float64", metadata={"declared": False})
        if any((v := _number(a.tolist() if hasattr(a, "tolist") else a)) is not None and math.isfinite(v)
               and not v.is_integer() for a in actions):
            return ActionSpace(kind="continuous", shape=(), dtype="float64", metadata={"declared": False})
    names = controls.get("action_names")
    if names:
        return ActionSpace.discrete(names=tuple(str(n) for n in names))
    return None


def has_continuous_actions(request: Any) -> bool:
    """True when the request's actions are continuous (declared so, or vectors / non-integers)."""
    try:
        space = action_space_of(request)
    except ContractError:
        return False
    return space is not None and space.is_continuous
