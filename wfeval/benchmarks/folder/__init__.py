"""The dataset folder family (format ``wfeval.dataset/1``): adapter, runtime hook, scorer and writer.

See docs/dataset-folder.md. ``python -m wfeval.export_dataset OUT`` writes any benchmark in it.
"""

from wfeval.benchmarks.folder.adapter import FolderBenchmark
from wfeval.benchmarks.folder.manifest import FORMAT, Problem, Record
from wfeval.benchmarks.folder.writer import write_dataset

__all__ = ["FolderBenchmark", "FORMAT", "Problem", "Record", "write_dataset"]
