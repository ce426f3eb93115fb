"""The Crafter benchmark (``benchmark=crafter``): real Crafter frames recorded offline under a
pinned world config, render size and behaviour policy."""

from __future__ import annotations

from typing import Any, Mapping

from wfeval.benchmarks.crafter import simulator
from wfeval.benchmarks.recorded.adapter import RecordedBenchmark


class CrafterBenchmark(RecordedBenchmark):
    """See :class:`~wfeval.benchmarks.recorded.adapter.RecordedBenchmark` for the sample layout.

    ``env`` pins crafter's ``area`` (world size), ``view`` (grid cells shown), ``size`` (render
    resolution: crafter draws its textures at this size, nearest neighbour), ``length`` (steps per
    episode) and ``reward``.
    """

    family = "crafter"
    simulator_module = simulator
    option_schemas = {"env": simulator.DEFAULTS}  # benchmark.env: crafter's world options, with their defaults

    def __init__(self, env: Mapping[str, Any] | None = None, **options: Any):
        super().__init__(env=simulator.check_config(env or {}), **options)
