"""One registry of metric classes and their :class:`~wfeval.api.MetricSpec`, by id or alias.

A built-in metric is declared once: its class (id, version, aliases, spec) and its config file
``conf/metric/<id>.yaml`` (defaults and ``_target_``). The registry's built-ins are read from
those config files (:mod:`wfeval.config.plugins`; no module is imported until a metric is asked
for), aliases from the classes, and the config schema is derived from the class
(:mod:`wfeval.config.derive`).
Third-party metrics come from the ``wfeval.metrics`` entry-point group (read from installed
package metadata the first time a name is not a built-in)::

    [project.entry-points."wfeval.metrics"]
    my_metric = "my_pkg.metrics:MyMetric"

An entry point's name may differ from its metric id (``name`` attribute of the class); both
resolve, as do the class's ``aliases``. Built-ins win over an entry point of the same name.

A metric serving several measurements (``measurements()``, :func:`wfeval.metrics.base.measurements_of`)
may name those a run can ask for by id (``measurement_options()``: ``imagined_probe_r2_k4`` ->
``imagined_probe_r2`` with ``horizons: [4]``): :meth:`MetricRegistry.measurement` resolves them.
"""

from __future__ import annotations

import difflib
from typing import Any, Mapping

from wfeval.api import MetricSpec
from wfeval.config.code import import_target as _import
from wfeval.config.plugins import builtin_targets as _builtin_targets
from wfeval.config.plugins import entry_points
from wfeval.metrics.base import REPRODUCIBILITY, DescribedMetric

ENTRY_POINT_GROUP = "wfeval.metrics"


def builtin_targets() -> dict[str, str]:
    """Built-in metric id → ``module.Class``, from ``conf/metric/*.yaml`` (wfeval.config.plugins)."""
    return _builtin_targets("metric")

__all__ = ["DescribedMetric", "REPRODUCIBILITY", "MetricRegistry", "REGISTRY", "UnknownMetricError",
           "builtin_targets"]


class UnknownMetricError(LookupError):
    """No metric by that id, alias or entry-point name; the message lists close and all names."""


def spec_of(cls: Any) -> MetricSpec:
    """The spec a metric class declares, or one built from the Metric protocol's attributes."""
    if callable(getattr(cls, "spec", None)):
        return cls.spec()
    return MetricSpec(id=str(getattr(cls, "name", cls.__name__)), version=str(getattr(cls, "version", "1.0")),
                      required_artifacts=tuple(getattr(cls, "required_artifacts", ())),
                      higher_is_better=getattr(cls, "higher_is_better", None),
                      implementation=f"{cls.__module__}.{cls.__qualname__}",
                      metadata={"reproducibility": getattr(cls, "reproducibility", "deterministic")})


def _measurement_options(cls: Any) -> dict[str, dict[str, Any]]:
    declared = getattr(cls, "measurement_options", None)
    return {str(k): dict(v) for k, v in declared().items()} if callable(declared) else {}


class MetricRegistry:
    """Metric classes by id, alias or entry-point name; nothing is imported until asked for."""

    def __init__(self, builtins: Mapping[str, str] | None = None, group: str = ENTRY_POINT_GROUP):
        self._builtin_override = None if builtins is None else dict(builtins)
        self._group = group
        self._entry_points: dict[str, Any] | None = None

    @property
    def _builtins(self) -> dict[str, str]:
        """Built-in id → ``module.Class`` (read when first needed)."""
        return builtin_targets() if self._builtin_override is None else self._builtin_override

    def aliases(self) -> dict[str, str]:
        """Alias → built-in id, from the classes' ``aliases`` (imports every built-in metric module)."""
        return {alias: metric_id for metric_id, target in self._builtins.items()
                for alias in getattr(_import(target), "aliases", ())}

    def entry_points(self) -> dict[str, Any]:
        """Entry points of the group by name (metadata only; no plugin module is imported)."""
        if self._entry_points is None:
            found = entry_points(self._group)
            self._entry_points = {name: ep for name, ep in found.items() if name not in self._builtins}
        return self._entry_points

    def ids(self) -> list[str]:
        """Built-in ids and entry-point names, sorted."""
        return sorted({*self._builtins, *self.entry_points()})

    def _lookup(self, name: str) -> Any | None:
        if name in self._builtins:
            return _import(self._builtins[name])
        if name in self.aliases():
            return _import(self._builtins[self.aliases()[name]])
        if name in self.entry_points():
            return self.entry_points()[name].load()
        for ep in self.entry_points().values():  # ids and aliases of plugins: load them to see
            cls = ep.load()
            spec = spec_of(cls)
            if name == spec.id or name in spec.aliases:
                return cls
        return None

    def measurement(self, name: str) -> tuple[str, dict[str, Any]] | None:
        """``(metric id, options)`` when ``name`` is a measurement a metric serves among several and
        names in its ``measurement_options()`` (``imagined_probe_r2_k4`` -> ``("imagined_probe_r2",
        {"horizons": [4]})``): the metric with those options scores that measurement alone. None
        otherwise (imports the built-in metric modules; entry points only when no built-in has it)."""
        if name in self._builtins:
            return None
        for metric_id, target in self._builtins.items():
            found = _measurement_options(_import(target)).get(name)
            if found is not None:
                return metric_id, found
        for ep_name, ep in self.entry_points().items():
            found = _measurement_options(ep.load()).get(name)
            if found is not None:
                return ep_name, found
        return None

    def load(self, name: str) -> type:
        """The metric class registered under ``name`` (id, alias or entry-point name)."""
        cls = self._lookup(name)
        if cls is None:
            names = self.ids()
            aliases = list(self.aliases())
            close = difflib.get_close_matches(name, [*names, *aliases], n=3, cutoff=0.5)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise UnknownMetricError(f"Unknown metric '{name}'.{hint} Available: {', '.join(names)}.")
        return cls

    def spec(self, name: str) -> MetricSpec:
        """The :class:`MetricSpec` of ``name`` (id, alias or entry-point name)."""
        return spec_of(self.load(name))

    def create(self, name: str, **kwargs: Any) -> Any:
        """An instance of ``name`` built with ``kwargs`` (the same keys as its config)."""
        return self.load(name)(**kwargs)


REGISTRY = MetricRegistry()


def available_metrics() -> list[str]:
    return REGISTRY.ids()


def get_metric_class(name: str) -> type:
    return REGISTRY.load(name)


def get_spec(name: str) -> MetricSpec:
    return REGISTRY.spec(name)


def create_metric(name: str, **kwargs: Any) -> Any:
    return REGISTRY.create(name, **kwargs)
