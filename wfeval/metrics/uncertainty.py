"""Uncertainty measures (``task=uncertainty``, ``protocol=sampling``): the N draws of a prediction
scored as a distribution against the true future (:mod:`wfeval.functional.uncertainty`).

Each reads the draws the sampling driver recorded (``generated_video`` = draw 0, ``sample_<i>_video``
for i >= 1; ``result.metadata["samples"]``) and the reference video; frame 0 (the given context) is
not scored. A deterministic model's one draw is a point forecast: its CRPS is its mean absolute
error; coverage and calibration error skip it (no distribution to calibrate). Values are in uint8 levels per pixel and channel.

- ``crps``: mean over predicted pixels of the ensemble CRPS (lower is better; L1);
- ``sample_diversity``: mean absolute difference between two draws, per pixel (0 for one draw; L0);
- ``interval_coverage``: share of predicted pixels whose true value lies in the draws' central
  interval for ``level`` (order statistics; calibrated: the interval's nominal coverage, in the
  components with the gap to it: ``level`` itself for 19 draws at 90%, 7/9 for 8; L1);
- ``calibration_error``: ECE of the PIT of the true pixels under the draws (lower is better; L1),
  with the PIT histogram in the components;
- ``state_crps``: CRPS of the agent's position located in each draw (the colour locator, as
  ``agent_position_error``) against the true track (``metadata["agent_positions"]``), in pixels per
  coordinate (L3; the gridworld); a draw where the agent is not found is left out of that frame;
- ``uncertainty_auroc`` / ``uncertainty_spearman``: does the model's uncertainty per frame (its own
  ``uncertainty`` report, else the draws' spread) rank the per-frame error of draw 0 (AUROC of "error
  above the sample's median", Spearman's ρ; L1)?
"""

from __future__ import annotations

from typing import Any, Mapping

import numpy as np

import wfeval.functional.uncertainty as F
from wfeval.api import GenerationRequest, GenerationResult, MetricResult
from wfeval.metrics.base import DescribedMetric
from wfeval.metrics.outcomes import scored, skipped
from wfeval.storage.artifacts import read_array

NO_DRAWS = "no sampled prediction (run task=uncertainty: protocol=sampling)"


def draws_of(request: GenerationRequest, result: GenerationResult) -> tuple[np.ndarray, np.ndarray, dict] | str:
    """(draws N×T×H×W×C, truth T×H×W×C, the result's samples record) with frame 0 dropped, or why not."""
    if result.status != "ok":
        return f"generation {result.status}: {result.error or ''}".strip()
    info = result.metadata.get("samples")
    if not isinstance(info, Mapping) or "generated_video" not in result.artifacts:
        return NO_DRAWS
    if "video" not in request.references:
        return "no reference video to score the draws against"
    keys = ["generated_video", *(f"sample_{i}_video" for i in range(1, int(info["returned"])))]
    missing = [k for k in keys if k not in result.artifacts]
    if missing:
        return f"draw output {missing[0]!r} missing"
    truth = read_array(request.references["video"])
    draws = np.stack([read_array(result.artifacts[k]) for k in keys])
    if draws.shape[1:] != truth.shape:
        return f"draws of shape {draws.shape[1:]} against a reference of shape {truth.shape}"
    return draws[:, 1:], truth[1:], dict(info)


ONE_DRAW = "one draw (a deterministic model answers once): a point forecast has no distribution to calibrate"


class _DrawMetric(DescribedMetric):
    groups = ("uncertainty",)
    version = "1.0"
    family = "uncertainty"
    capability = "uncertainty"
    requires_reference = True
    required_artifacts = ("generated_video",)
    rung = "L1"
    needs_draws = False  # True: a point forecast (one draw) is skipped (coverage, calibration)

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        found = draws_of(request, result)
        if isinstance(found, str):
            return skipped(request.sample_id, self.name, found)
        draws, truth, info = found
        if self.needs_draws and draws.shape[0] < 2:
            return skipped(request.sample_id, self.name, ONE_DRAW, category="one draw: not applicable")
        if not len(truth):
            return skipped(request.sample_id, self.name, "no predicted frame (only the context frame)")
        value, components = self.score(draws, truth, result)
        if value is None:
            return skipped(request.sample_id, self.name, components["reason"])
        return scored(request.sample_id, self.name, float(value),
                      components={"draws": int(draws.shape[0]), "deterministic": bool(info.get("deterministic")),
                                  **components})

    def score(self, draws: np.ndarray, truth: np.ndarray, result: GenerationResult) -> tuple[Any, dict]:
        raise NotImplementedError


def _per_frame(function: Any, draws: np.ndarray, truth: np.ndarray) -> np.ndarray:
    """``function(draws[:, t], truth[t]).mean()`` per frame t (one frame at a time: little memory)."""
    return np.array([float(np.mean(function(draws[:, t], truth[t]))) for t in range(len(truth))])


class CRPS(_DrawMetric):
    name = "crps"
    aliases = ("pixel_crps",)
    higher_is_better = False
    output_unit = "uint8 levels"
    display_name = "CRPS (pixels)"
    description = "Continuous ranked probability score of the draws' pixels against the true frames."
    variant = "ensemble CRPS E|X−y| − ½E|X−X'| per pixel and channel, frames after the context; 1 draw: MAE"
    bounds = (0.0, 255.0)

    def score(self, draws: np.ndarray, truth: np.ndarray, result: GenerationResult) -> tuple[Any, dict]:
        per_frame = _per_frame(F.crps_ensemble, draws, truth)
        point = _per_frame(lambda x, y: np.abs(x[0].astype(np.float64) - y), draws, truth)
        return per_frame.mean(), {"per_frame": per_frame.tolist(), "draw0_mae": float(point.mean())}


class SampleDiversity(_DrawMetric):
    name = "sample_diversity"
    higher_is_better = None  # more is not better: a calibrated spread is (see crps, calibration_error)
    output_unit = "uint8 levels"
    display_name = "Sample diversity"
    description = "Mean absolute difference between two draws of the same prediction, per pixel."
    variant = "E|X−X'| over pairs of distinct draws, per pixel and channel, frames after the context; 1 draw: 0"
    bounds = (0.0, 255.0)
    rung = "L0"
    requires_reference = False

    def score(self, draws: np.ndarray, truth: np.ndarray, result: GenerationResult) -> tuple[Any, dict]:
        per_frame = _per_frame(lambda x, y: F.sample_diversity(x), draws, truth)
        return per_frame.mean(), {"per_frame": per_frame.tolist()}


class IntervalCoverage(_DrawMetric):
    name = "interval_coverage"
    higher_is_better = None  # calibrated = the nominal level
    output_unit = "fraction of pixels"
    display_name = "Interval coverage"
    description = "Share of true pixels inside the draws' central interval (calibrated: the nominal level)."
    variant = "central interval between order statistics j and N+1−j, bounds included; nominal (N+1−2j)/(N+1)"
    bounds = (0.0, 1.0)
    needs_draws = True

    def __init__(self, level: float = 0.9, confidence: float = 0.95, seed: int = 0):
        super().__init__(confidence, seed)
        if not 0.0 < level < 1.0:
            raise ValueError(f"metric.{self.name}.level must be in (0, 1), got {level}")
        self.level = float(level)

    def score(self, draws: np.ndarray, truth: np.ndarray, result: GenerationResult) -> tuple[Any, dict]:
        per_frame = _per_frame(lambda x, y: F.interval_coverage(x, y, self.level), draws, truth)
        value = per_frame.mean()
        j, nominal = F.interval_ranks(draws.shape[0], self.level)
        return value, {"level": self.level, "interval_ranks": [j, int(draws.shape[0]) + 1 - j], "nominal": nominal,
                       "gap": float(value - nominal), "per_frame": per_frame.tolist()}


class CalibrationError(_DrawMetric):
    name = "calibration_error"
    aliases = ("ece",)
    higher_is_better = False
    output_unit = "probability"
    display_name = "Calibration error (ECE)"
    description = "Mean |share of PIT ≤ p − p| over quantile levels p of the true pixels under the draws."
    variant = "PIT by mid-rank among the N+1 values; levels 0.05…0.95; frames after the context"
    bounds = (0.0, 1.0)
    needs_draws = True

    def __init__(self, bins: int = 10, confidence: float = 0.95, seed: int = 0):
        super().__init__(confidence, seed)
        if isinstance(bins, bool) or not isinstance(bins, int) or bins < 2:
            raise ValueError(f"metric.{self.name}.bins must be an integer >= 2, got {bins!r}")
        self.bins = bins

    def score(self, draws: np.ndarray, truth: np.ndarray, result: GenerationResult) -> tuple[Any, dict]:
        values = np.concatenate([F.pit(draws[:, t], truth[t]).ravel() for t in range(len(truth))])
        return F.calibration_error(values), {"pit_histogram": F.pit_histogram(values, self.bins)}


def frame_uncertainty(draws: np.ndarray, truth: np.ndarray, result: GenerationResult) -> tuple[np.ndarray, str] | str:
    """The uncertainty per predicted frame and its source: the model's own report (mean over draws),
    else the draws' spread (diversity); why there is none otherwise."""
    reported = result.metadata.get("uncertainty")
    if reported:
        values = np.asarray(reported, dtype=np.float64)
        if values.ndim != 2 or values.shape[1] != len(truth):
            return f"the model's uncertainty has shape {values.shape}; expected one value per predicted frame"
        return values.mean(axis=0), "model"
    if draws.shape[0] < 2:
        return "no uncertainty: one draw and no uncertainty reported by the model"
    return _per_frame(lambda x, y: F.sample_diversity(x), draws, truth), "draw spread"


class UncertaintyAUROC(_DrawMetric):
    name = "uncertainty_auroc"
    higher_is_better = True
    output_unit = "AUROC"
    display_name = "Uncertainty AUROC"
    description = "AUROC of the per-frame uncertainty for 'error above the median' (0.5: uninformative)."
    variant = "per frame: error = MAE of draw 0; uncertainty = the model's report, else the draws' spread"
    bounds = (0.0, 1.0)
    key = "auroc"

    def score(self, draws: np.ndarray, truth: np.ndarray, result: GenerationResult) -> tuple[Any, dict]:
        found = frame_uncertainty(draws, truth, result)
        if isinstance(found, str):
            return None, {"reason": found}
        uncertainty, source = found
        if len(truth) < 2:
            return None, {"reason": "one predicted frame: nothing to rank"}
        errors = _per_frame(lambda x, y: np.abs(x[0].astype(np.float64) - y), draws, truth)
        ranking = F.error_ranking(uncertainty, errors)
        value = ranking[self.key]
        if value is None:
            return None, {"reason": f"{self.key} undefined (constant errors or uncertainty)"}
        return value, {"source": source, **ranking, "uncertainty": uncertainty.tolist(), "errors": errors.tolist()}


class UncertaintySpearman(UncertaintyAUROC):
    name = "uncertainty_spearman"
    output_unit = "Spearman ρ"
    display_name = "Uncertainty rank correlation"
    description = "Spearman correlation between the per-frame uncertainty and the per-frame error."
    bounds = (-1.0, 1.0)
    key = "spearman"


class StateCRPS(_DrawMetric):
    name = "state_crps"
    higher_is_better = False
    output_unit = "px"
    display_name = "CRPS (agent position)"
    description = "CRPS of the agent position located in each draw against the true track, per coordinate."
    variant = "colour locator per draw; ensemble CRPS per coordinate (y, x), mean over frames; not found: left out"
    bounds = (0.0, None)
    rung = "L3"

    def __init__(self, size: int = 8, confidence: float = 0.95, seed: int = 0):
        super().__init__(confidence, seed)
        if size < 1:
            raise ValueError(f"metric.{self.name}.size must be >= 1, got {size}")
        self.size = int(size)

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        if request.metadata.get("agent_positions") is None:
            return skipped(request.sample_id, self.name, "no true agent track (metadata['agent_positions'])")
        self._track = np.asarray(request.metadata["agent_positions"], np.float64)
        return super().compute_sample(request, result)

    def score(self, draws: np.ndarray, truth: np.ndarray, result: GenerationResult) -> tuple[Any, dict]:
        from wfeval.functional.control import ColorLocator

        track = self._track[1:]
        if len(track) != len(truth):
            return None, {"reason": f"a true track of {len(self._track)} positions for {len(truth) + 1} frames"}
        locate = ColorLocator(size=self.size)
        found = [locate(d) for d in draws]  # per draw, per frame: (y, x) or None
        per_frame, missing = [], 0
        for t in range(len(track)):
            seen = np.asarray([f[t] for f in found if f[t] is not None], np.float64).reshape(-1, 2)
            missing += len(draws) - len(seen)
            if len(seen):
                per_frame.append(float(F.crps_ensemble(seen, track[t]).mean()))
        if not per_frame:
            return None, {"reason": "the agent is found in no draw of any frame"}
        return float(np.mean(per_frame)), {"per_frame": per_frame, "not_found": missing}
