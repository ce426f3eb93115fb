"""The Atari family: Atari 2600 games (ale-py) recorded offline into benchmarks.

Adapter :class:`AtariBenchmark`, simulator :mod:`.simulator`; recording, cache, runtime hook,
scorer and the simulator baselines are shared with the other recorded families
(:mod:`wfeval.benchmarks.recorded`). ``ale_py`` is imported only when a benchmark is built.
"""

from wfeval.benchmarks.atari.adapter import AtariBenchmark

__all__ = ["AtariBenchmark"]
