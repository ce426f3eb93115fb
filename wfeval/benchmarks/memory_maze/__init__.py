"""The Memory Maze family: first-person 3D mazes (``memory-maze`` on dm_control and MuJoCo),
recorded offline into benchmarks, with the exact state exposed.

Adapter :class:`MemoryMazeBenchmark`, simulator :mod:`.simulator` (exact snapshots, any pose
rendered), the renderer's set-up :mod:`.renderer` (Mesa's software EGL, configured here), the
explore-and-revisit behaviour policy :mod:`.policy`, and the pose recovery behind ``pose_error``
:mod:`.pose`. Recording, cache, runtime hook, scorer and the simulator baselines are shared with
the other recorded families (:mod:`wfeval.benchmarks.recorded`). MuJoCo is imported only when a
benchmark is built. See docs/memory-maze.md.
"""

from wfeval.benchmarks.memory_maze.adapter import MemoryMazeBenchmark

__all__ = ["MemoryMazeBenchmark"]
