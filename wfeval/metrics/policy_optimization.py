"""Policy-optimisation metrics (``task=policy_optimization``; decision-ladder rung L7): does a policy
trained inside the world model work in the true simulator?

They read the returns the protocol recorded (``result.metadata["policy_optimization"]["returns"]``): per
training seed and held-out episode, the real return of the policy trained inside the model, of the same
learner trained in the simulator (the ceiling) and of a random policy (the floor).

- ``optimization_lift``: ``(model-trained − random) / (simulator-trained − random)`` of the mean returns
  over every sample, seed and episode (:mod:`wfeval.functional.optimization`), with a percentile
  bootstrap interval over those units. Defined for the set: a per-sample row holds the sample's
  returns (``raw_value`` None, like FVD); the ceiling and floor are in the aggregate's diagnostics;
- ``model_trained_return``, ``simulator_trained_return``, ``random_policy_return``: per sample, the mean
  real return of each policy over seeds and episodes (the value and its two anchors, side by side).
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

import wfeval.functional.optimization as F
from wfeval.api import AggregateResult, GenerationRequest, GenerationResult, MetricResult
from wfeval.metrics.base import DescribedMetric, whole_set_start
from wfeval.metrics.outcomes import scored, skipped

NO_RETURNS = "no deployed returns (run task=policy_optimization)"
PER_SAMPLE_NOTE = "per-sample rows carry the sample's returns, raw_value None: the lift is of the whole set"
SIDES = ("model", "simulator", "random")


def returns_of(result: GenerationResult) -> dict[str, list[float]] | str:
    """Per side, the real returns of one sample (seeds × episodes, flattened), or why there are none."""
    if result.status != "ok":
        return f"generation {result.status}: {result.error or ''}".strip()
    info = result.metadata.get("policy_optimization")
    if not isinstance(info, Mapping) or not isinstance(info.get("returns"), Mapping):
        return NO_RETURNS
    out = {side: [float(v) for row in info["returns"].get(side, ()) for v in row] for side in SIDES}
    if not all(out.values()) or len({len(v) for v in out.values()}) != 1:
        return f"returns of unequal or no episodes: {({k: len(v) for k, v in out.items()})}"
    if not np.isfinite(np.concatenate(list(out.values()))).all():
        return "a non-finite return"
    return out


class _Returns(DescribedMetric):
    groups = ("policy_optimization",)
    rung = "L7"
    family = "policy_optimization"
    capability = "planning"
    higher_is_better = True
    output_unit = "return"
    bounds = (0.0, None)  # the task's rewards are in [0, 1]
    side = ""

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        found = returns_of(result)
        if isinstance(found, str):
            return skipped(request.sample_id, self.name, found)
        return scored(request.sample_id, self.name, float(np.mean(found[self.side])),
                      components={"returns": found[self.side]})


class ModelTrainedReturn(_Returns):
    name = "model_trained_return"
    side = "model"
    display_name = "Model-trained return"
    description = "Real return of the policy trained inside the world model, deployed in the simulator."
    variant = "tabular Q-learning, fixed seeded budget; mean over training seeds and held-out episodes"


class SimulatorTrainedReturn(_Returns):
    name = "simulator_trained_return"
    side = "simulator"
    display_name = "Simulator-trained return (ceiling)"
    description = "Real return of the same learner trained in the true simulator itself: the ceiling."
    variant = "the same learner, seeds, budget and held-out episodes as model_trained_return"


class RandomPolicyReturn(_Returns):
    name = "random_policy_return"
    side = "random"
    higher_is_better = None  # the floor: a property of the task, not of the model
    display_name = "Random-policy return (floor)"
    description = "Real return of a uniformly random policy on the same held-out episodes: the floor."
    variant = "uniform actions, seeded per training seed and episode"


class OptimizationLift(DescribedMetric):
    name = "optimization_lift"
    groups = ("policy_optimization",)
    rung = "L7"
    version = "1.0"
    higher_is_better = True
    aggregator = "ratio_of_means"
    statistics = ("lift",)
    family = "policy_optimization"
    capability = "planning"
    output_unit = "fraction of the simulator-trained gain"
    display_name = "Optimisation lift"
    description = "(model-trained − random) / (simulator-trained − random) real return, over samples, seeds, episodes."
    variant = "ratio of mean returns; percentile bootstrap over (sample, seed, episode) units"
    bounds = (None, 1.5)  # above 1 only by chance: the simulator-trained learner is the same learner on the truth
    internal_parameters = ()

    def __init__(self, bootstrap: int = 1000, confidence: float = 0.95, seed: int = 0):
        super().__init__(confidence, seed)
        if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 0:
            raise ValueError(f"metric.{self.name}.bootstrap must be an integer >= 0 (0: no interval), got {bootstrap!r}")
        self.bootstrap = bootstrap

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        found = returns_of(result)
        if isinstance(found, str):
            return skipped(request.sample_id, self.name, found)
        return scored(request.sample_id, self.name, None, components=found, diagnostics={"per_sample": PER_SAMPLE_NOTE})

    def aggregate(self, results: Sequence[MetricResult]) -> AggregateResult:
        rows, base, diagnostics = whole_set_start(self.name, results, self.aggregator, PER_SAMPLE_NOTE)
        pooled = {side: np.array([v for r in rows for v in r.components[side]], np.float64) for side in SIDES}
        value = F.optimization_lift(*pooled.values()) if rows else None
        if value is None:
            reason = ("no item was scored" if not rows else "the simulator-trained policy is no better than random: "
                      "the lift is undefined (a larger training budget, task.data.optimization.train_episodes)")
            return AggregateResult(**base, n_valid=0, n_skipped=len(results), valid=False,
                                   diagnostics={**diagnostics, "reason": reason})
        interval = None
        if self.bootstrap:
            found = F.bootstrap_lift(*pooled.values(), n_resamples=self.bootstrap, confidence=self.confidence,
                                     seed=self.seed)
            if found is not None:
                interval = {"method": f"percentile bootstrap over (sample, seed, episode) units ({self.bootstrap} "
                            "resamples)", "level": self.confidence, "low": found[0], "high": found[1]}
        diagnostics.update(value=value, units=int(len(pooled["model"])),
                           simulator_ceiling=float(pooled["simulator"].mean()), random_floor=float(pooled["random"].mean()),
                           model_trained=float(pooled["model"].mean()))
        return AggregateResult(**base, n_valid=len(rows), n_skipped=len(results) - len(rows),
                               raw_stats={"lift": value}, normalized_stats={"lift": value},
                               confidence_interval=interval or {}, valid=True, diagnostics=diagnostics)
