"""The pusht family: gym-pusht's Push-T (a round agent pushes a T-shaped block onto a target pose,
continuous 2-D target-position actions), recorded offline with its exact state.

Adapter :class:`PushTBenchmark`, simulator :mod:`.simulator`, behaviour policies :mod:`.policy`.
gym-pusht is imported only when a benchmark is built.
"""

from wfeval.benchmarks.pusht.adapter import PushTBenchmark

__all__ = ["PushTBenchmark"]
