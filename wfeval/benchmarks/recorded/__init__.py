"""Machinery shared by benchmark families recorded from a real simulator (``atari``, ``crafter``).

A family provides a simulator module (:mod:`.simulator` says what it must offer) and a thin
adapter subclass of :class:`~wfeval.benchmarks.recorded.adapter.RecordedBenchmark`; recording,
the recording cache, the behaviour policies, the resize filter, the runtime hook, the scorer and
the simulator baselines are shared. Nothing here imports a game package. See docs/games.md.
"""

from wfeval.benchmarks.recorded.adapter import RecordedBenchmark
from wfeval.benchmarks.recorded.simulator import INSTALL_HINT, Step

__all__ = ["INSTALL_HINT", "RecordedBenchmark", "Step"]
