"""One registry of metric classes and their :class:`~wfeval.api.MetricSpec`, by id or alias.

Sources, in order: the built-ins (:data:`BUILTINS`, imported only when asked for) and the
``wfeval.metrics`` entry-point group (read from installed package metadata the first time a
name is not a built-in; a plugin module is imported only when its metric is asked for)::

    [project.entry-points."wfeval.metrics"]
    my_metric = "my_pkg.metrics:MyMetric"

An entry point's name may differ from its metric id (``name`` attribute of the class); both
resolve, as do the class's ``aliases``. Built-ins win over an entry point of the same name.
Configs reach any metric through ``_target_`` as well (``conf/metric/<id>.yaml``).

:class:`DescribedMetric` is the base of the built-in metrics that declare their full spec
(aliases, capability, reference need, reproducibility class, variant).
"""

from __future__ import annotations

import dataclasses
import difflib
import importlib
from importlib import metadata as importlib_metadata
from typing import Any, ClassVar

from wfeval.api import MetricSpec
from wfeval.metrics.base import BaseMetric

ENTRY_POINT_GROUP = "wfeval.metrics"
REPRODUCIBILITY = ("deterministic", "stochastic", "judge-based")

BUILTINS: dict[str, tuple[str, tuple[str, ...]]] = {
    "generated_rate": ("wfeval.metrics.basic:GeneratedRate", ()),
    "artifact_count": ("wfeval.metrics.basic:ArtifactCount", ()),
    "fvd": ("wfeval.metrics.fvd:FVD", ("frechet_video_distance",)),
    "psnr": ("wfeval.metrics.reference:PSNR", ("peak_signal_noise_ratio",)),
    "ssim": ("wfeval.metrics.reference:SSIM", ("structural_similarity",)),
    "mse": ("wfeval.metrics.reference:MSE", ("mean_squared_error",)),
    "mae": ("wfeval.metrics.reference:MAE", ("mean_absolute_error",)),
    "flicker": ("wfeval.metrics.temporal:Flicker", ("temporal_flickering",)),
    "motion_magnitude": ("wfeval.metrics.temporal:MotionMagnitude", ("moving_pixel_fraction",)),
    "frame_repeat_rate": ("wfeval.metrics.temporal:FrameRepeatRate", ("frame_repeat",)),
    "action_following": ("wfeval.metrics.control:ActionFollowing", ("action_accuracy",)),
    "agent_position_error": ("wfeval.metrics.control:AgentPositionError", ("position_error",)),
}
"""Built-in metric id → (``module:Class``, aliases)."""


class UnknownMetricError(LookupError):
    """No metric by that id, alias or entry-point name; the message lists close and all names."""


class DescribedMetric(BaseMetric):
    """:class:`BaseMetric` whose :meth:`spec` also carries aliases, capability and the variant."""

    aliases: ClassVar[tuple[str, ...]] = ()
    display_name: ClassVar[str] = ""
    capability: ClassVar[str] = ""
    requires_reference: ClassVar[bool] = False
    variant: ClassVar[str] = ""
    tags: ClassVar[tuple[str, ...]] = ()

    @classmethod
    def spec(cls) -> MetricSpec:
        base = super().spec()
        return dataclasses.replace(
            base, aliases=cls.aliases, display_name=cls.display_name, capability=cls.capability,
            requires_reference=cls.requires_reference, tags=cls.tags,
            metadata={**dict(base.metadata or {}), "variant": cls.variant},
        )


def _import(target: str) -> Any:
    module, _, attr = target.partition(":")
    return getattr(importlib.import_module(module), attr)


def spec_of(cls: Any) -> MetricSpec:
    """The spec a metric class declares, or one built from the Metric protocol's attributes."""
    if callable(getattr(cls, "spec", None)):
        return cls.spec()
    return MetricSpec(id=str(getattr(cls, "name", cls.__name__)), version=str(getattr(cls, "version", "1.0")),
                      required_artifacts=tuple(getattr(cls, "required_artifacts", ())),
                      higher_is_better=getattr(cls, "higher_is_better", None),
                      implementation=f"{cls.__module__}.{cls.__qualname__}",
                      metadata={"reproducibility": getattr(cls, "reproducibility", "deterministic")})


class MetricRegistry:
    """Metric classes by id, alias or entry-point name; nothing is imported until asked for."""

    def __init__(self, builtins: dict[str, tuple[str, tuple[str, ...]]] | None = None,
                 group: str = ENTRY_POINT_GROUP):
        self._builtins = dict(BUILTINS if builtins is None else builtins)
        self._group = group
        self._entry_points: dict[str, Any] | None = None

    def entry_points(self) -> dict[str, Any]:
        """Entry points of the group by name (metadata only; no plugin module is imported)."""
        if self._entry_points is None:
            found = importlib_metadata.entry_points(group=self._group)
            self._entry_points = {ep.name: ep for ep in found if ep.name not in self._builtins}
        return self._entry_points

    def ids(self) -> list[str]:
        """Built-in ids and entry-point names, sorted."""
        return sorted({*self._builtins, *self.entry_points()})

    def _lookup(self, name: str) -> Any | None:
        if name in self._builtins:
            return _import(self._builtins[name][0])
        for target, aliases in self._builtins.values():
            if name in aliases:
                return _import(target)
        if name in self.entry_points():
            return self.entry_points()[name].load()
        for ep in self.entry_points().values():  # ids and aliases of plugins: load them to see
            cls = ep.load()
            spec = spec_of(cls)
            if name == spec.id or name in spec.aliases:
                return cls
        return None

    def load(self, name: str) -> type:
        """The metric class registered under ``name`` (id, alias or entry-point name)."""
        cls = self._lookup(name)
        if cls is None:
            names = self.ids()
            aliases = [a for _, al in self._builtins.values() for a in al]
            close = difflib.get_close_matches(name, [*names, *aliases], n=3, cutoff=0.5)
            hint = f" Did you mean: {', '.join(close)}?" if close else ""
            raise UnknownMetricError(f"Unknown metric '{name}'.{hint} Available: {', '.join(names)}.")
        return cls

    def spec(self, name: str) -> MetricSpec:
        """The :class:`MetricSpec` of ``name``; built-in aliases are filled in when the class has none."""
        spec = spec_of(self.load(name))
        builtin = self._builtins.get(spec.id)
        if builtin and not spec.aliases:
            spec = dataclasses.replace(spec, aliases=builtin[1])
        return spec

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
