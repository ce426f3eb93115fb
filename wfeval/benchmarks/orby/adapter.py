"""The orby benchmark (``benchmark=orby``): tiny-jepa's OrbyWorld recorded offline, with its exact state."""

from __future__ import annotations

from typing import Any, Mapping

from wfeval.benchmarks.orby import simulator
from wfeval.benchmarks.recorded.adapter import RecordedBenchmark


class OrbyBenchmark(RecordedBenchmark):
    """See :class:`~wfeval.benchmarks.recorded.adapter.RecordedBenchmark` for the sample layout;
    ``task=probing`` reads the exact state (:data:`simulator.STATE_VARIABLES`) of every frame."""

    family = "orby"
    simulator_module = simulator
    option_schemas = {"env": simulator.DEFAULTS}

    def __init__(self, env: Mapping[str, Any] | None = None, **options: Any):
        super().__init__(env=simulator.check_config(env or {}), **options)

    def state_variables(self) -> tuple:
        return simulator.STATE_VARIABLES
