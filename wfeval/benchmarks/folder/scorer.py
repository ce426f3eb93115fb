"""Scorer of the folder family: the standard row, plus where each sample came from."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wfeval.api import GenerationRequest, GenerationResult
from wfeval.benchmarks.base import input_error

if TYPE_CHECKING:
    from wfeval.benchmarks.folder.adapter import FolderBenchmark


class FolderScorer:
    def __init__(self, benchmark: FolderBenchmark):
        self.benchmark = benchmark

    def to_row(self, request: GenerationRequest, result: GenerationResult, row: dict[str, Any]) -> dict[str, Any]:
        row["metadata"].update(
            dataset_line=self.benchmark.line_of(request.sample_id),
            dataset_files=self.benchmark.files_of(request.sample_id),
        )
        if input_error(request):
            row["metadata"]["input_error"] = input_error(request)
        return row
