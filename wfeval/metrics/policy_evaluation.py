"""Policy-evaluation metrics (``task=policy_evaluation``): does the world model rank policies as reality does?

Both read the returns the protocol recorded: inside the model (``result.metadata
["policy_evaluation"]["model"]``) and in the true simulator from the same start (``request.metadata
["policy_evaluation"]["true"]``), one per policy (:mod:`wfeval.functional.ranking`).

- ``policy_rank_correlation`` (WorldArena's "world model as policy evaluator"): Spearman's rank
  correlation between the policies' mean returns inside the model and in the simulator, with a
  percentile bootstrap interval over starts. Defined for the set only: a per-sample row holds the
  start's returns (``raw_value`` None, like FVD). Returns that tie for every policy inside the model
  (a model that does not react to the actions) count as 0;
- ``return_error``: per start, the mean over policies of |return inside the model − true return|.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

import wfeval.functional.ranking as F
from wfeval.api import AggregateResult, GenerationRequest, GenerationResult, MetricResult
from wfeval.metrics.base import DescribedMetric, whole_set_start
from wfeval.metrics.outcomes import scored, skipped

NO_RETURNS = "no policy returns (run task=policy_evaluation)"
PER_SAMPLE_NOTE = "per-sample rows carry the start's returns, raw_value None: the rank correlation is of the whole set"


Returns = tuple[list[str], list[float], list[float]]


def returns_of(request: GenerationRequest, result: GenerationResult) -> Returns | str:
    """(policies, returns inside the model, true returns) of one start, or why there are none."""
    if result.status != "ok":
        return f"generation {result.status}: {result.error or ''}".strip()
    model = result.metadata.get("policy_evaluation")
    true = request.metadata.get("policy_evaluation")
    if not isinstance(model, Mapping) or not isinstance(true, Mapping) or "true" not in true:
        return NO_RETURNS
    names = list(model["policies"])
    missing = [n for n in names if n not in true["true"]]
    if missing:
        return f"no true return for policy {missing[0]!r}"
    inside = [float(model["model"][n]["return"]) for n in names]
    outside = [float(true["true"][n]["return"]) for n in names]
    if not np.isfinite(inside + outside).all():  # never into a ranking: one NaN would erase every start's
        return f"a non-finite return (model {inside}, true {outside})"
    return names, inside, outside


class PolicyRankCorrelation(DescribedMetric):
    name = "policy_rank_correlation"
    groups = ("policy_evaluation",)
    aliases = ("policy_ranking",)
    version = "1.0"
    higher_is_better = True
    aggregator = "spearman"
    statistics = ("spearman",)
    family = "policy_evaluation"
    capability = "planning"
    output_unit = "Spearman ρ"
    display_name = "Policy rank correlation"
    description = "Spearman correlation of the policies' mean returns inside the model and in the simulator."
    variant = "Spearman of per-policy mean returns over starts (ties: average ranks; constant: 0); bootstrap: starts"
    bounds = (-1.0, 1.0)
    internal_parameters = ()  # seed draws the bootstrap

    def __init__(self, bootstrap: int = 1000, confidence: float = 0.95, seed: int = 0):
        super().__init__(confidence, seed)
        if isinstance(bootstrap, bool) or not isinstance(bootstrap, int) or bootstrap < 0:
            raise ValueError(f"metric.{self.name}.bootstrap must be an integer >= 0 (0: no interval), "
                             f"got {bootstrap!r}")
        self.bootstrap = bootstrap

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        found = returns_of(request, result)
        if isinstance(found, str):
            return skipped(request.sample_id, self.name, found)
        names, model, true = found
        return scored(request.sample_id, self.name, None, components={"policies": names, "model_returns": model,
                                                                      "true_returns": true},
                      diagnostics={"per_sample": PER_SAMPLE_NOTE})

    def aggregate(self, results: Sequence[MetricResult]) -> AggregateResult:
        rows, base, diagnostics = whole_set_start(self.name, results, self.aggregator, PER_SAMPLE_NOTE)

        def invalid(reason: str) -> AggregateResult:
            return AggregateResult(**base, n_valid=0, n_skipped=len(results), valid=False,
                                   diagnostics={**diagnostics, "reason": reason})

        if not rows:
            return invalid(f"no item was scored: all {len(results)} skipped or errored" if results else "no items")
        policies = {tuple(r.components["policies"]) for r in rows}
        if len(policies) > 1:
            return invalid("starts were evaluated with different policy sets; never mixed into one ranking")
        model = np.array([r.components["model_returns"] for r in rows], np.float64)
        true = np.array([r.components["true_returns"] for r in rows], np.float64)
        value = F.policy_rank_correlation(model, true, constant=0.0)
        interval: dict = {}  # bootstrap=0: no interval (an empty one, as the result contract has it)
        if self.bootstrap:
            low, high = F.bootstrap_rank_correlation(model, true, n_resamples=self.bootstrap,
                                                     confidence=self.confidence, seed=self.seed)
            interval = {"method": f"percentile bootstrap over starts ({self.bootstrap} resamples)",
                        "level": self.confidence, "low": low, "high": high}
        names = list(next(iter(policies)))
        diagnostics.update(
            value=value, starts=len(rows), policies=names,
            mean_returns={"model": dict(zip(names, model.mean(axis=0).tolist())),
                          "true": dict(zip(names, true.mean(axis=0).tolist()))},
            model_returns_tie=bool(np.ptp(model.mean(axis=0)) == 0),
        )
        return AggregateResult(**base, n_valid=len(rows), n_skipped=len(results) - len(rows),
                               raw_stats={"spearman": value}, normalized_stats={"spearman": value},
                               confidence_interval=interval, valid=True, diagnostics=diagnostics)


class ReturnError(DescribedMetric):
    name = "return_error"
    groups = ("policy_evaluation",)
    version = "1.0"
    higher_is_better = False
    family = "policy_evaluation"
    capability = "planning"
    output_unit = "return"
    display_name = "Return error"
    description = "Mean absolute difference between the returns inside the model and in the simulator."
    variant = "per start: mean over policies of |return inside the model − true return|"
    bounds = (0.0, None)

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        found = returns_of(request, result)
        if isinstance(found, str):
            return skipped(request.sample_id, self.name, found)
        names, model, true = found
        value = float(F.return_error(np.array([model]), np.array([true]))[0])
        return scored(request.sample_id, self.name, value,
                      components={"policies": names, "model_returns": model, "true_returns": true})
