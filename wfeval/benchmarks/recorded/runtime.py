"""Runtime hook of recorded families: report what recording cost (or that the cache served it)
before generation, and release the simulator after it."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Mapping

from wfeval.benchmarks.base import RunContext

if TYPE_CHECKING:
    from wfeval.benchmarks.recorded.adapter import RecordedBenchmark


class RecordingRuntime:
    def __init__(self, benchmark: RecordedBenchmark):
        self.benchmark = benchmark

    def summary(self) -> dict[str, Any]:
        bench = self.benchmark
        stats = dict(bench.stats)
        seconds = stats["seconds"]
        return {
            "trajectories_recorded": stats["recorded"],
            "trajectories_cached": stats["cached"],
            "indexes_refused": list(stats["rebuilt"]),  # edited or damaged indexes, recorded again
            "steps_simulated": stats["steps"],
            "frames_rendered": stats["steps"] + stats["recorded"],
            "recording_seconds": round(seconds, 4),
            "frames_per_second": round((stats["steps"] + stats["recorded"]) / seconds, 1) if seconds else None,
            "identity": bench.identity,
        }

    def prepare(self, context: RunContext) -> Mapping[str, Any]:
        summary = self.summary()
        context.event("recording", **{k: v for k, v in summary.items() if k != "identity"})
        return {"recording": summary}

    def finalize(self, context: RunContext, *, status: str) -> Mapping[str, Any] | None:
        self.benchmark.close()
        return None
