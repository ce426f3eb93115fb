"""Dataset readers: episodes of LeRobot v3 folders, HDF5 files, Minari datasets and video + actions pairs, read in place
and cut into samples (docs/dataset-readers.md). The classes load on first use (``--help`` stays light)."""

from __future__ import annotations

from typing import Any

_CLASSES = {
    "EpisodeBenchmark": "wfeval.benchmarks.episodes.base",
    "LeRobotBenchmark": "wfeval.benchmarks.episodes.lerobot",
    "HDF5Benchmark": "wfeval.benchmarks.episodes.hdf5",
    "VideoActionsBenchmark": "wfeval.benchmarks.episodes.video_actions",
    "MinariBenchmark": "wfeval.benchmarks.episodes.minari",
}

__all__ = sorted(_CLASSES)


def reader_targets() -> frozenset[str]:
    """The ``_target_`` paths of the dataset readers (not their base), by this package's name and by
    their module's: what ``run.from_run`` may rebuild from a run folder's recorded benchmark."""
    readers = [n for n in _CLASSES if n != "EpisodeBenchmark"]
    return frozenset([*(f"{__name__}.{n}" for n in readers), *(f"{_CLASSES[n]}.{n}" for n in readers)])


def __getattr__(name: str) -> Any:
    if name in _CLASSES:
        import importlib

        return getattr(importlib.import_module(_CLASSES[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
