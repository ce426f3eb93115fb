"""The Crafter family: Crafter worlds (the ``crafter`` package) recorded offline into a benchmark.

Adapter :class:`CrafterBenchmark`, simulator :mod:`.simulator` (deterministic across processes,
see there); recording, cache, runtime hook, scorer and the simulator baselines are shared with
the other recorded families (:mod:`wfeval.benchmarks.recorded`). ``crafter`` is imported only
when a benchmark is built.
"""

from wfeval.benchmarks.crafter.adapter import CrafterBenchmark

__all__ = ["CrafterBenchmark"]
