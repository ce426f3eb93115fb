"""Scorer of recorded families: the standard row, plus where the sample sits in its trajectory."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from wfeval.api import GenerationRequest, GenerationResult

if TYPE_CHECKING:
    from wfeval.benchmarks.recorded.adapter import RecordedBenchmark

ROW_KEYS = ("family", "game", "trajectory", "window", "start_step", "return", "episode_ends", "recording_key")


class RecordingScorer:
    def __init__(self, benchmark: RecordedBenchmark):
        self.benchmark = benchmark

    def to_row(self, request: GenerationRequest, result: GenerationResult, row: dict[str, Any]) -> dict[str, Any]:
        row["metadata"].update({k: request.metadata[k] for k in ROW_KEYS if k in request.metadata})
        return row
