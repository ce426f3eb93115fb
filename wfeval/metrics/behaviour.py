"""Behavioural fidelity and reward prediction (docs/decision-measures.md).

- ``behavioural_fidelity`` (L6): the return a frozen policy earns in the true simulator while it sees
  the model's predicted frames, as a fraction of its return when it sees the real ones, from the same
  start (``task=behavioural_fidelity``: ``result.metadata["behavioural_fidelity"]`` and the finalized
  ``request.metadata["behavioural_fidelity"]["real"]``). A start where the policy earns nothing on
  real frames has no fraction (skipped with the reason); the mean over starts with its interval.
- ``reward_error`` (L3): per sample, the mean squared error of the reward the model predicts for each
  step against the simulator's (``result.metadata["reward_prediction"]``: written by
  ``task=behavioural_fidelity`` and ``task=reward_prediction``). Chance — the mean-reward predictor, the
  mean true reward of all scored steps predicted at every step — is in the aggregate's diagnostics
  (``chance``) beside the value;
- ``return_prediction_error`` (L3): the same over the horizon: |predicted − true| discounted return
  of the sample's steps, with chance likewise.

A model that predicts no reward (under ``task=reward_prediction``: no ``reward`` of its own nor a latent
``reward``; under ``task=behavioural_fidelity``: a family that reads no reward off frames) is skipped by
the reward measures, saying so.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

import numpy as np

import wfeval.functional.rewards as F
from wfeval.api import AggregateResult, GenerationRequest, GenerationResult, MetricResult
from wfeval.metrics.base import DescribedMetric
from wfeval.metrics.outcomes import scored, skipped

NO_EPISODE = "no behavioural-fidelity episode (run task=behavioural_fidelity)"
NO_REWARDS = "no reward record (run task=behavioural_fidelity or task=reward_prediction)"
NO_PREDICTION = ("the model predicts no reward: no reward of its own (StepOutput.reward, a latent model's "
                 "reward) under task=reward_prediction, none the benchmark reads off its frames otherwise")


def _failed(result: GenerationResult) -> str | None:
    return None if result.status == "ok" else f"generation {result.status}: {result.error or ''}".strip()


class BehaviouralFidelity(DescribedMetric):
    name = "behavioural_fidelity"
    groups = ("behavioural_fidelity",)
    version = "1.0"
    rung = "L6"
    bounds = (0.0, None)  # a ratio of returns that are never negative; above 1 when the predictions helped by chance
    higher_is_better = True
    family = "decision"
    capability = "planning"
    output_unit = "fraction of the real-perception return"
    display_name = "Behavioural fidelity"
    description = "Return of a frozen policy seeing the model's frames, over its return seeing the real ones."
    variant = "per start: return(model perception) / return(real perception), both in the true simulator"

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        why = _failed(result)
        if why:
            return skipped(request.sample_id, self.name, why)
        model = result.metadata.get("behavioural_fidelity")
        real = (request.metadata.get("behavioural_fidelity") or {}).get("real")
        if not isinstance(model, Mapping) or not isinstance(real, Mapping):
            return skipped(request.sample_id, self.name, NO_EPISODE)
        imagined, true = float(model["return"]), float(real["return"])
        components = {"policy": model.get("policy"), "model_perception_return": imagined, "real_return": true,
                      "model_perception_steps": model.get("steps"), "real_steps": real.get("steps")}
        if not true > 0:
            return skipped(request.sample_id, self.name, f"the policy earns {true:g} on real frames from this start: "
                           "no fraction", category="no real return")
        return scored(request.sample_id, self.name, imagined / true, components=components)


def rewards_of(result: GenerationResult) -> tuple[np.ndarray, np.ndarray, float, str] | str:
    """(true rewards, predicted rewards, discount, source) of a sample, or why there are none."""
    why = _failed(result)
    if why:
        return why
    info = result.metadata.get("reward_prediction")
    if not isinstance(info, Mapping):
        return NO_REWARDS
    if info.get("predicted") is None:
        return NO_PREDICTION
    true = np.asarray(info["true"], dtype=np.float64)
    predicted = np.asarray(info["predicted"], dtype=np.float64)
    if true.shape != predicted.shape or not len(true):
        return f"{len(predicted)} predicted rewards for {len(true)} true ones"
    return true, predicted, float(info.get("discount", 1.0)), str(info.get("source"))


class RewardError(DescribedMetric):
    name = "reward_error"
    groups = ("behavioural_fidelity", "reward_prediction")
    version = "1.0"
    rung = "L3"
    higher_is_better = False
    family = "decision"
    capability = "reward"
    output_unit = "reward²"
    display_name = "Reward error"
    description = "Mean squared error of the model's reward per step; chance (the mean-reward predictor) beside it."
    variant = "per step (r̂ − r)², mean over the sample's steps; chance: the mean true reward of all scored steps"
    bounds = (0.0, None)

    error = staticmethod(F.step_reward_error)

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        found = rewards_of(result)
        if isinstance(found, str):
            return skipped(request.sample_id, self.name, found)
        true, predicted, discount, source = found
        return scored(request.sample_id, self.name, self.error(true, predicted, discount),
                      components={"true": true.tolist(), "predicted": predicted.tolist(), "discount": discount,
                                  "source": source})

    def aggregate(self, results: Sequence[MetricResult]) -> AggregateResult:
        """The mean error, and beside it ``chance``: the same error of the mean-reward predictor (the
        mean true reward over every scored step, predicted at every step)."""
        out = super().aggregate(results)
        rows = [r for r in results if r.valid and isinstance(r.components, Mapping) and "true" in r.components]
        if not rows:
            return out
        discounts = {float(r.components["discount"]) for r in rows}
        if len(discounts) > 1:
            return dataclasses.replace(out, diagnostics={**dict(out.diagnostics), "chance": None,
                                                         "chance_reason": "samples of different discounts"})
        episodes = [r.components["true"] for r in rows]
        chance = F.mean_reward_chance(episodes, self.error, discounts.pop())
        mean = float(np.concatenate([np.asarray(e, np.float64) for e in episodes]).mean())
        sources = sorted({str(r.components.get("source")) for r in rows})
        return dataclasses.replace(out, diagnostics={**dict(out.diagnostics), "chance": chance,
                                                     "mean_reward": mean, "reward_source": sources})


class ReturnPredictionError(RewardError):
    name = "return_prediction_error"
    display_name = "Return prediction error"
    output_unit = "return"
    description = "|predicted − true| discounted return over the sample's steps; chance (mean reward) beside it."
    variant = "per sample |Σ γ^t r̂_t − Σ γ^t r_t|; chance: the mean true reward of all scored steps at every step"

    error = staticmethod(F.horizon_return_error)
