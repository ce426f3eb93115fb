"""Interactive metrics: how fast a model steps (``protocol=autoregressive`` / ``closed_loop``).

Both read the per-call rows a protocol driver records in the result
(``result.metadata["steps"]``: ``call`` = start | step, ``frames``, ``latency_seconds``); an
open-loop result has none and is skipped with that reason.

- ``step_latency``: milliseconds per ``step`` call. Per sample: the median over its calls (with
  the sample's mean/p50/p95 in the components); aggregate: the median over samples with a
  bootstrap CI (one slow sample cannot drag it, nor its interval below 0 ms), the mean and p95
  beside it, plus the pooled p50/p95 over every call of the run in the diagnostics.
- ``real_time_factor``: frames produced per second of stepping ÷ the task's frame rate
  (``request.generation["fps"]``). Above 1 the model keeps up with the game in real time.
  Aggregate: the median over samples, bootstrap CI.

Both are >= 0 (``bounds``); timings are robust statistics because wall-clock times are skewed.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Sequence

import numpy as np

from wfeval.api import AggregateResult, GenerationRequest, GenerationResult, MetricResult
from wfeval.metrics.outcomes import scored, skipped
from wfeval.metrics.registry import DescribedMetric

NO_STEPS = "no per-step timings in the result (run with protocol=autoregressive or closed_loop)"


def step_rows(result: GenerationResult) -> list[dict[str, Any]] | None:
    rows = result.metadata.get("steps") if result.status == "ok" else None
    if not rows:
        return None
    return [r for r in rows if r.get("call", "step") == "step" and r.get("latency_seconds") is not None]


class StepLatency(DescribedMetric):
    name = "step_latency"
    groups = ("interactive",)
    aliases = ("latency_per_step",)
    version = "1.1"  # 1.1: median per sample and over samples (was the mean with a normal interval)
    higher_is_better = False
    family = "interactive"
    capability = "interactivity"
    output_unit = "ms per step call"
    display_name = "Step latency"
    description = "Wall-clock milliseconds per step call of the model (median per sample and over samples; p95)."
    variant = "time.perf_counter around model.step; start() excluded; median of calls, median of samples"
    aggregator = "median"
    statistics = ("median", "p95", "mean", "min", "max")
    bounds = (0.0, None)

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        rows = step_rows(result)
        if not rows:
            return skipped(request.sample_id, self.name, NO_STEPS if result.status == "ok" else "not generated")
        ms = np.array([1000.0 * float(r["latency_seconds"]) for r in rows])
        return scored(request.sample_id, self.name, float(np.median(ms)),
                      components={"calls": len(ms), "mean_ms": float(ms.mean()), "p50_ms": float(np.percentile(ms, 50)),
                                  "p95_ms": float(np.percentile(ms, 95)), "latencies_ms": ms.round(6).tolist()})

    def aggregate(self, results: Sequence[MetricResult]) -> AggregateResult:
        out = super().aggregate(results)
        pooled = [v for r in results if r.status == "ok" for v in r.components.get("latencies_ms", ())]
        if pooled:
            out = dataclasses.replace(out, diagnostics={
                **dict(out.diagnostics), "pooled_calls": len(pooled), "pooled_mean_ms": float(np.mean(pooled)),
                "pooled_p50_ms": float(np.percentile(pooled, 50)), "pooled_p95_ms": float(np.percentile(pooled, 95))})
        return out


class RealTimeFactor(DescribedMetric):
    name = "real_time_factor"
    groups = ("interactive",)
    aliases = ("rtf",)
    version = "1.1"  # 1.1: the median over samples with a bootstrap interval (was the mean, normal)
    higher_is_better = True
    family = "interactive"
    capability = "interactivity"
    output_unit = "× real time"
    display_name = "Real-time factor"
    description = "Frames produced per second of stepping divided by the task's fps (>= 1: real time)."
    variant = "sum of frames / sum of step seconds / generation.fps; median over samples"
    aggregator = "median"
    statistics = ("median", "mean", "min", "max")
    bounds = (0.0, None)

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        rows = step_rows(result)
        if not rows:
            return skipped(request.sample_id, self.name, NO_STEPS if result.status == "ok" else "not generated")
        fps = request.generation.get("fps")
        if not fps or float(fps) <= 0:
            return skipped(request.sample_id, self.name, "the task declares no fps (request.generation['fps'])")
        frames = sum(int(r.get("frames", 0)) for r in rows)
        seconds = sum(float(r["latency_seconds"]) for r in rows)
        if seconds <= 0:
            return skipped(request.sample_id, self.name, "step time too short to measure (0 s)")
        produced = frames / seconds
        return scored(request.sample_id, self.name, produced / float(fps),
                      components={"frames": frames, "seconds": seconds, "frames_per_second": produced,
                                  "task_fps": float(fps)})
