"""The blocks of a run record: JSON objects as dataclasses with typed fields, unknown keys kept
and key order kept (``to_dict`` gives back what ``from_dict`` was given), and the blocks
``manifest.json`` and ``results.json`` share (protocol, benchmark, model). The defaults a record
leaves out live here, once: a run without a ``protocol`` ran open loop.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from typing import Any, ClassVar, Mapping

OPEN_LOOP = "open_loop"
"""The protocol of a run whose record names none (the default task's)."""


@dataclass
class Block:
    """A JSON object with typed fields. ``extra`` holds the keys no field names; the order the
    keys were read in is kept, so that a block written back is the one read. A block built in
    code writes its fields in declaration order, leaving out optional ones that are None. A field
    that is always an object (or a list) reads a ``null`` as its empty default: a run whose results
    say ``"protocol": null`` ran open loop, as one without the key."""

    _nested: ClassVar[Mapping[str, type["Block"]]] = {}  # key -> block type
    _mapped: ClassVar[Mapping[str, type["Block"]]] = {}  # key -> block type of each value
    _mapped2: ClassVar[Mapping[str, type["Block"]]] = {}  # key -> block type of each value's values
    _always: ClassVar[tuple[str, ...]] = ()  # written even when None

    extra: dict[str, Any] = field(default_factory=dict, repr=False, kw_only=True)
    _keys: tuple[str, ...] | None = field(default=None, repr=False, compare=False, kw_only=True)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls) if not f.name.startswith("_") and f.name != "extra")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None):  # type: ignore[no-untyped-def]
        """The block of a JSON object (None or a non-object: an empty block)."""
        data = data if isinstance(data, Mapping) else {}
        names = set(cls.field_names())
        factories = {f.name: f.default_factory for f in dataclasses.fields(cls)
                     if f.default_factory is not dataclasses.MISSING}
        values: dict[str, Any] = {}
        for key, value in data.items():
            if key not in names:
                continue
            if key in factories and not isinstance(value, (Mapping, list)):  # null where an object belongs
                value = factories[key]()
            elif key in cls._nested and isinstance(value, Mapping):
                value = cls._nested[key].from_dict(value)
            elif key in cls._mapped and isinstance(value, Mapping):
                value = {k: cls._mapped[key].from_dict(v) if isinstance(v, Mapping) else v for k, v in value.items()}
            elif key in cls._mapped2 and isinstance(value, Mapping):
                inner = cls._mapped2[key]
                value = {k: {g: inner.from_dict(r) if isinstance(r, Mapping) else r for g, r in v.items()}
                         if isinstance(v, Mapping) else v for k, v in value.items()}
            values[key] = value
        extra = {k: v for k, v in data.items() if k not in names}
        return cls(**values, extra=extra, _keys=tuple(data))

    def to_dict(self) -> dict[str, Any]:
        """The JSON object: the keys read, in their order, then fields set since (None left out)."""
        names = self.field_names()
        order = list(self._keys) if self._keys is not None else []
        order += [n for n in names if n not in order and (getattr(self, n) is not None or n in self._always)]
        order += [k for k in self.extra if k not in order]
        out: dict[str, Any] = {}
        for key in order:
            if key in names:
                out[key] = _plain(getattr(self, key))
            elif key in self.extra:
                out[key] = self.extra[key]
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, Block):
        return value.to_dict()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return value.to_dict()
    return value


# ---------------------------------------------------------------------------------------------
# the blocks both files share


@dataclass
class ProtocolInfo(Block):
    """How the samples were generated (``protocol``); a record without one ran open loop."""

    name: str = OPEN_LOOP
    driver: str = OPEN_LOOP
    chunk: Any = None
    policy: Any = None
    planner: Any = None

    _always = ("name", "driver")

    @property
    def label(self) -> str:
        """The protocol with its policy (``closed_loop(random)``) or planner method: results of
        different protocols measure different things and are never ranked together."""
        label = str(self.name or OPEN_LOOP)
        policy = self.policy
        if isinstance(policy, dict) and policy.get("_target_"):
            short = str(policy["_target_"]).rsplit(".", 1)[-1].removesuffix("Policy").lower() or "policy"
            label += f"({short})"
        planner = self.planner
        if isinstance(planner, dict) and planner.get("method"):
            label += f"({planner['method']})"
        return label


@dataclass
class BenchmarkInfo(Block):
    """What was evaluated: the benchmark's id, version, samples and their content hash."""

    id: str | None = None
    name: str | None = None
    version: Any = None
    fingerprint: Any = None
    n_samples: int | None = None
    dataset_hash: str | None = None
    metrics: list[str] | None = None
    runtime: dict[str, Any] | None = None


@dataclass
class ModelInfo(Block):
    """The model: its name, version and cache key (``key``)."""

    name: str | None = None
    version: Any = None
    key: str | None = None
    target: str | None = None


@dataclass
class ManifestMetric(Block):
    """A metric as the manifest records it: version, class and identity (the resume check)."""

    version: Any = None
    identity: str | None = None
    node: str | None = None  # the metric node that serves this measurement (one node, several measurements)

    @property
    def metric_class(self) -> str | None:
        """The metric's class (the key ``class``, which no field can be named)."""
        return self.extra.get("class")
