"""The built-in procedural gridworld: simulator (:mod:`.world`) and benchmark adapter."""

from wfeval.benchmarks.gridworld.adapter import GridworldBenchmark

__all__ = ["GridworldBenchmark"]
