"""Memory metrics (``task=memory``): is a place drawn the same when the agent comes back to it?

Both compare two frames of the generated video with each other (self-consistency: no reference),
on what the benchmark declares static (``references["static_mask"]``), after averaging
``pool``×``pool`` blocks (:mod:`wfeval.functional.memory`): the mean absolute difference in uint8
levels, lower is better.

- ``revisit_error`` (WorldMem, iWorld-Bench's cyclic paths): every revisit the benchmark planned
  from its exact state (``metadata["memory"]["revisits"]``: the frame of a place's first visit and
  of each later visit after leaving it); a sample's value is the mean over gap buckets (1, 2, 4, 8,
  …) of the bucket's mean error, so every gap length weighs the same; the aggregate adds the curve
  over the gap (``diagnostics["curve"]``: per bucket the mean over samples, its interval and count);
- ``reversibility_error`` ("world stability", arXiv 2503.08122): for every action sequence followed
  by its inverse (``metadata["memory"]["loops"]``, from the inverses the benchmark declares), the
  frame after the last inverse against the frame before the first action; the curve is over the
  loop length.

Where the benchmark's true frames at a revisit differ too (Memory Maze: a rolling ball never
returns to exactly the same pose), it says so (``metadata["memory"]["measure"] ==
"change_vs_truth"``) and both score the model's change between the two frames against the true
change (``|(x̂_j − x̂_i) − (x_j − x_i)|`` on the static blocks, the reference video's frames): the
oracle scores exactly 0. On gridworld the true change on static content is 0, so the two coincide.

On a dataset (no static mask; revisits found where the recorded state returns,
:mod:`wfeval.benchmarks.episodes.revisits`) the change is measured against the truth only on the
blocks where the dataset's own two frames agree (``metadata["memory"]["agree"]``, uint8 levels of the
block means): what moved in the scene between the visits is left out, and a pair with no such
block is dropped.

A model that ignores time (``static``) scores 0 on both (on the gridworld; on a dataset: the true
change on the agreeing blocks, at most ``agree``): read them beside the controllability measures,
which such a model fails.
"""

from __future__ import annotations

import dataclasses
from typing import Mapping, Sequence

import numpy as np

import wfeval.functional.memory as F
from wfeval import stats
from wfeval.api import AggregateResult, GenerationRequest, GenerationResult, MetricResult
from wfeval.metrics.base import DescribedMetric, default_aggregate
from wfeval.metrics.outcomes import scored, skipped
from wfeval.storage.artifacts import read_array

TRUTH = "change_vs_truth"  # metadata["memory"]["measure"]: the true frames at a revisit differ too
NO_PLAN = "no revisit plan in the request (metadata['memory']): run task=memory"


class RevisitError(DescribedMetric):
    name = "revisit_error"
    groups = ("memory",)
    aliases = ("loop_closure_error",)
    version = "1.0"
    higher_is_better = False
    family = "memory"
    capability = "memory"
    output_unit = "uint8 levels"
    display_name = "Revisit error"
    description = "Generated frame at a revisit against the generated frame at the first visit, on static content."
    variant = "mean |Δ| of pool×pool block means over blocks static in both frames; mean over gap buckets"
    required_artifacts = ("generated_video",)
    bounds = (0.0, 255.0)
    pairs_key = "revisits"
    curve_over = "gap"

    def __init__(self, pool: int = 8, confidence: float = 0.95, seed: int = 0):
        super().__init__(confidence, seed)
        if isinstance(pool, bool) or not isinstance(pool, int) or pool < 1:
            raise ValueError(f"metric.{self.name}.pool must be an integer >= 1, got {pool!r}")
        self.pool = pool

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        memory = request.metadata.get("memory")
        if not isinstance(memory, Mapping) or self.pairs_key not in memory:
            return skipped(request.sample_id, self.name, NO_PLAN, category=NO_PLAN)
        pairs = [tuple(p) for p in memory[self.pairs_key]]
        if not pairs:
            return skipped(request.sample_id, self.name, f"the benchmark planned no {self.pairs_key} for this sample")
        ref, agree = request.references.get("static_mask"), memory.get("agree")
        if ref is None and agree is None:
            return skipped(request.sample_id, self.name, "no static mask (references['static_mask'])")
        video = read_array(result.artifacts["generated_video"])
        # a dataset declares no static mask: the blocks where its own two frames agree are compared
        masks = read_array(ref).astype(bool) if ref is not None else np.ones(video.shape[:3], bool)
        if video.shape[:3] != masks.shape:
            return skipped(request.sample_id, self.name,
                           f"generated video shape {video.shape} does not match the static masks {masks.shape}")
        truth = None
        if memory.get("measure") == TRUTH:
            if "video" not in request.references:
                return skipped(request.sample_id, self.name, "the change is measured against the truth, but "
                               "the request has no reference video")
            truth = read_array(request.references["video"])
            if truth.shape != video.shape:
                return skipped(request.sample_id, self.name, f"generated video shape {video.shape} does not "
                               f"match the reference {truth.shape}")
        if agree is not None and truth is None:
            return skipped(request.sample_id, self.name, "metadata['memory']['agree'] compares where the true frames "
                           "agree, but the change is not measured against the truth (measure)")
        errors = F.revisit_errors(video, pairs, masks, self.pool, truth, agree)
        if not errors:
            return skipped(request.sample_id, self.name, "no pair has a static block in both frames" if agree is None
                           else f"no pair has a block where the dataset's own two frames agree (block means within "
                           f"{agree:g} levels: task.data.memory.frame_tolerance)")
        buckets = F.bucket_means(errors)
        return scored(request.sample_id, self.name, float(np.mean(list(buckets.values()))),
                      components={"buckets": {str(b): v for b, v in buckets.items()}, "pairs": len(errors),
                                  "per_pair": [[gap, err] for gap, err in errors], "pool": self.pool,
                                  **({"pairs_found": len(pairs)} if agree is not None else {})},
                      diagnostics={"variant": self.variant + ("; model's change minus the true change"
                                                              if truth is not None else "")
                                   + (f", on blocks where the true frames agree within {agree:g} levels"
                                      if agree is not None else "")})

    def aggregate(self, results: Sequence[MetricResult]) -> AggregateResult:
        """The mean over samples with its interval, and the curve over the gap (per bucket)."""
        agg = default_aggregate(self.name, results, aggregator=self.aggregator, statistics=self.statistics,
                                ci=self.ci, confidence=self.confidence, seed=self.seed, bounds=self.bounds)
        per_bucket: dict[int, list[float]] = {}
        for row in results:
            if row.status in ("ok", "fail"):
                for bucket, value in (row.components.get("buckets") or {}).items():
                    per_bucket.setdefault(int(bucket), []).append(float(value))
        curve = {}
        for bucket in sorted(per_bucket):
            summary = stats.summarize(per_bucket[bucket], ci="normal", confidence=self.confidence, bounds=self.bounds)
            curve[str(bucket)] = {"mean": summary.value, "interval": summary.confidence_interval,
                                  "n": len(per_bucket[bucket])}
        return dataclasses.replace(agg, diagnostics={**agg.diagnostics, "curve": curve, "curve_over": self.curve_over,
                                                     "buckets": "gaps in (b/2, b] frames, b a power of two"})


class ReversibilityError(RevisitError):
    name = "reversibility_error"
    aliases = ("world_stability_error",)
    display_name = "Reversibility error"
    description = "Frame after an action sequence and its inverse against the frame before it, on static content."
    variant = "mean |Δ| of pool×pool block means over blocks static in both frames; per loop, mean over length buckets"
    pairs_key = "loops"
    curve_over = "loop length"
