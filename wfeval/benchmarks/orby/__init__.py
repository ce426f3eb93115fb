"""The orby family: tiny-jepa's OrbyWorld (32×32, agent, two balls, a pellet) recorded offline.

Adapter :class:`OrbyBenchmark`, simulator :mod:`.simulator` (exact state per frame for
``task=probing``); the pretrained tiny-jepa checkpoint served through the latent interface is
``model=tiny_jepa`` (:mod:`.tiny_jepa`). ``tiny_jepa`` is imported only when a benchmark is built.
"""

from wfeval.benchmarks.orby.adapter import OrbyBenchmark

__all__ = ["OrbyBenchmark"]
