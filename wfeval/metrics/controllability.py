"""Controllability metrics (``task=controllability``): does the generated video obey its actions?

- ``action_sensitivity`` (dB, higher is better; Genie's ΔtPSNR, Bruce et al. 2024): the PSNR against
  the reference of the video generated with the true actions minus the mean PSNR of the videos
  generated with the K counterfactual sequences of ``protocol=counterfactual``
  (``counterfactual_video_<k>``), per frame, paired within the sample. A model that ignores its
  actions scores exactly 0; each PSNR is capped at ``max_db`` (the oracle's true-action PSNR is).
- ``idm_accuracy`` (higher is better): an inverse-dynamics model (``idm``: a provider, by default the
  IDM shipped for the sample's benchmark, :mod:`wfeval.recipes.idm`) reads each transition's action
  off the generated video: the share it gets right (discrete actions) or R² (continuous). Each row
  also scores the IDM on the sample's reference video — the ceiling — and the aggregate reports
  that ceiling, the chance level (the accuracy expected were the IDM's readings of these videos
  independent of the true actions — what a model that ignores its actions scores —, beside
  ``uniform`` 1/actions and ``majority`` the best constant guess; for R², the IDM's score on each
  sample's first frame held still, which a frozen model scores exactly: above 0 where a frame alone tells
  much of the action, as Push-T's target positions next to the agent) and the IDM (name,
  weights sha256, pinned, held-out figures) beside the value. On a dataset whose every episode is
  scored the IDMs are cross-fitted over episodes (:mod:`wfeval.recipes.idm.on_dataset`): the aggregate
  records ``cross_fitting`` (folds, seed, each fold's episodes) and one IDM per fold.
"""

from __future__ import annotations

import dataclasses
from typing import Any, Mapping, Sequence

import numpy as np

import wfeval.functional.controllability as F
from wfeval import stats
from wfeval.api import AggregateResult, GenerationRequest, GenerationResult, MetricResult, has_continuous_actions
from wfeval.config.code import ImportPath
from wfeval.metrics.base import DescribedMetric, default_aggregate
from wfeval.metrics.control import resolve_callable
from wfeval.metrics.outcomes import scored, skipped
from wfeval.storage.artifacts import read_array

PREFIX = "counterfactual_video_"
NO_COUNTERFACTUALS = "no counterfactual generations (counterfactual_video_<k>): run task=controllability"


def counterfactual_keys(result: GenerationResult) -> list[str]:
    keys = [k for k in result.artifacts if k.startswith(PREFIX) and k[len(PREFIX):].isdigit()]
    return sorted(keys, key=lambda k: int(k[len(PREFIX):]))


class ActionSensitivity(DescribedMetric):
    name = "action_sensitivity"
    groups = ("controllability",)
    aliases = ("delta_psnr", "dt_psnr")
    version = "1.0"
    higher_is_better = True
    family = "controllability"
    capability = "action_control"
    requires_reference = True
    output_unit = "dB"
    display_name = "Action sensitivity (ΔtPSNR)"
    description = "PSNR with the true actions minus PSNR with counterfactual actions, paired per sample."
    variant = "Genie ΔtPSNR: per-frame PSNR capped at max_db, true minus mean of K counterfactuals, mean over frames"
    required_artifacts = ("generated_video",)
    bounds = (-100.0, 100.0)

    def __init__(self, data_range: float = 255.0, skip_frames: int = 0, max_db: float = 100.0,
                 confidence: float = 0.95, seed: int = 0):
        super().__init__(confidence, seed)
        if skip_frames < 0 or not data_range > 0 or not 0 < max_db < float("inf"):
            raise ValueError(f"metric.{self.name}: need skip_frames >= 0, data_range > 0 and a finite max_db > 0, "
                             f"got {skip_frames}, {data_range}, {max_db}")
        self.data_range, self.skip_frames, self.max_db = float(data_range), int(skip_frames), float(max_db)
        self.bounds = (-self.max_db, self.max_db)

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        keys = counterfactual_keys(result)
        if not keys:
            return skipped(request.sample_id, self.name, NO_COUNTERFACTUALS, category=NO_COUNTERFACTUALS)
        ref = request.references.get("video")
        if ref is None:
            return skipped(request.sample_id, self.name, "no reference video (references['video'])")
        target, generated = read_array(ref), read_array(result.artifacts["generated_video"])
        others = [read_array(result.artifacts[k]) for k in keys]
        for key, video in (("generated_video", generated), *zip(keys, others)):
            if video.shape != target.shape:
                return skipped(request.sample_id, self.name,
                               f"{key} shape {video.shape} differs from the reference {target.shape}")
        if len(target) <= self.skip_frames:
            return skipped(request.sample_id, self.name, f"no frame left after skip_frames={self.skip_frames}")
        out = F.action_sensitivity(generated, others, target, data_range=self.data_range, max_db=self.max_db,
                                   skip=self.skip_frames)
        return scored(request.sample_id, self.name, out["value"],
                      components={**out, "first_frame": self.skip_frames, "counterfactuals": len(others)},
                      diagnostics={"variant": self.variant})


def chance_levels(components: Sequence[Any]) -> dict[str, float | None]:
    """Pooled over the rows of a discrete ``idm_accuracy``: ``chance`` = Σ_a f_read(a)·f_true(a), the
    accuracy expected were the IDM's readings independent of the true actions (Cohen's p_e: a model
    that ignores its actions scores it); ``uniform`` = 1/actions; ``majority`` = the best constant guess."""
    width = max(int(c.get("n_actions") or len(c.get("counts") or ())) for c in components)
    true, read = np.zeros(width, np.int64), np.zeros(width, np.int64)
    for c in components:
        for total, key in ((true, "counts"), (read, "predicted_counts")):
            counts = np.asarray(c.get(key) or [], np.int64)
            total[:len(counts)] += counts
    if not true.sum():
        return {"chance": None}
    out = {"uniform": 1.0 / width, "majority": float(true.max() / true.sum())}
    out["chance"] = float((true / true.sum()) @ (read / read.sum())) if read.sum() else None
    return out


class IDMAccuracy(DescribedMetric):
    name = "idm_accuracy"
    groups = ("controllability",)
    aliases = ("inverse_dynamics_accuracy",)
    version = "1.1"  # 1.1: a continuous row carries still_value (its chance level), so no 1.0 row is reused
    higher_is_better = True
    family = "controllability"
    capability = "action_control"
    output_unit = "fraction of transitions (R² for continuous actions)"
    display_name = "IDM action accuracy"
    description = "Share of transitions whose action an inverse-dynamics model recovers from the generated video."
    variant = "IDM on frames (t-1, t, t+1); accuracy (discrete) or R² vs the IDM's training variance (continuous)"
    required_artifacts = ("generated_video",)
    bounds = (None, 1.0)  # accuracy in [0, 1]; R² in (-inf, 1]
    statistics = ("mean", "std", "min", "max")
    imports = ("torch",)  # the IDM's network: imported before an overlapped scoring thread starts

    def __init__(self, idm: ImportPath = None, confidence: float = 0.95, seed: int = 0):
        super().__init__(confidence, seed)
        self.idm = resolve_callable(idm, f"metric.{self.name}.idm") if not hasattr(idm, "for_request") else idm

    def bind_benchmark(self, bench: Any, store: Any) -> None:
        """The run's benchmark and store (a dataset: the IDM is trained on its training episodes on first use)."""
        bind = getattr(self.idm, "bind_benchmark", None)
        if callable(bind):
            bind(bench, store)

    def cache_identity(self) -> Any:
        identity = getattr(self.idm, "identity", None)
        return identity() if callable(identity) else None

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        actions = request.controls.get("actions")
        if not actions:
            return skipped(request.sample_id, self.name, "no actions in the request (controls['actions'])")
        if self.idm is None:
            return skipped(request.sample_id, self.name,
                           "no inverse-dynamics model configured (metric.idm_accuracy.idm)")
        idm, why = self.idm.for_request(request)
        if idm is None:
            return skipped(request.sample_id, self.name, why, category="no inverse-dynamics model for this sample")
        video = read_array(result.artifacts["generated_video"])
        if video.ndim != 4 or len(video) != len(actions) + 1:
            need = len(actions) + 1
            return skipped(request.sample_id, self.name,
                           f"generated video shape {video.shape}: {len(actions)} actions need {need} frames")
        continuous = has_continuous_actions(request)
        truth = np.asarray(actions, np.float64).reshape(len(actions), -1) if continuous else \
            np.asarray(actions, np.int64)

        def score(frames: np.ndarray, sha256: str | None = None) -> tuple[float, np.ndarray]:
            stored = getattr(idm, "predict_stored", None)  # a stored video's actions, read once per IDM
            predicted = stored(frames, sha256) if sha256 and callable(stored) else idm.predict(frames)
            if continuous:
                return F.action_r2(predicted, truth, idm.variance), predicted
            return F.action_accuracy(predicted, truth), predicted

        value, predicted = score(video)
        ref = request.references.get("video")
        reference = None
        if ref is not None and tuple(ref.shape) == video.shape:
            reference = score(read_array(ref), ref.sha256)[0]  # read (and verified) first
        components = {"value": value, "reference_value": reference, "transitions": len(actions),
                      "kind": "continuous" if continuous else "discrete"}
        if continuous:  # the chance level: the first frame held still (what a model ignoring its actions makes)
            components["still_value"] = score(np.repeat(video[:1], len(video), axis=0))[0]
        if not continuous:  # what the chance level is computed from (aggregate)
            n = max(len(request.controls.get("action_names") or ()), int(truth.max()) + 1, int(predicted.max()) + 1)
            components.update(counts=np.bincount(truth, minlength=n).tolist(),
                              predicted_counts=np.bincount(predicted, minlength=n).tolist(), n_actions=n)
        return scored(request.sample_id, self.name, value, components=components,
                      diagnostics={"idm": idm.describe(), "variant": self.variant})

    def aggregate(self, results: Sequence[MetricResult]) -> AggregateResult:
        """The mean with its interval, plus beside it the ceiling (the IDM on the same samples' real
        reference transitions), the chance level and the IDM's identity and held-out figures."""
        agg = default_aggregate(self.name, results, aggregator=self.aggregator, statistics=self.statistics,
                                ci=self.ci, confidence=self.confidence, seed=self.seed, bounds=self.bounds)
        rows = [r for r in results if r.status in ("ok", "fail")]
        extra: dict[str, Any] = {}
        ceilings = [r.components.get("reference_value") for r in rows]
        ceilings = [float(c) for c in ceilings if c is not None]
        if ceilings:
            summary = stats.summarize(ceilings, ci="normal", confidence=self.confidence, bounds=self.bounds)
            extra["ceiling"] = summary.value
            extra["ceiling_interval"] = summary.confidence_interval
            extra["ceiling_n"] = len(ceilings)
        kinds = {r.components.get("kind") for r in rows}
        if kinds == {"continuous"}:
            still = [float(r.components["still_value"]) for r in rows if r.components.get("still_value") is not None]
            extra["chance"] = float(np.mean(still)) if len(still) == len(rows) else None  # never a guessed 0
        elif kinds == {"discrete"}:
            extra.update(chance_levels([r.components for r in rows]))
        idms = {str((r.diagnostics.get("idm") or {}).get("weights_sha256")): r.diagnostics.get("idm") for r in rows}
        if idms:
            extra["idm"] = next(iter(idms.values())) if len(idms) == 1 else sorted(idms.values(), key=str)
        folds = sorted((i["cross_fitting"] for i in idms.values() if isinstance(i, Mapping) and i.get("cross_fitting")),
                       key=lambda c: c["fold"])
        if folds:  # one IDM per fold, each scoring (value and ceiling) only its own fold's episodes
            extra["cross_fitting"] = {"folds": folds[0]["folds"], "seed": folds[0]["seed"],
                                      "scored": {str(c["fold"]): c["scores"] for c in folds}}
        if extra:
            extra["note"] = ("ceiling: the same IDM on these samples' real reference transitions; chance: the accuracy "
                             "expected if the IDM's readings of these videos were independent of the true actions "
                             "(R²: the IDM on each sample's first frame held still, what a model that ignores its "
                             "actions scores; above 0 where a frame tells the actions, as target positions near the "
                             "agent); uniform: 1/actions; majority: always the most frequent true action")
        return dataclasses.replace(agg, diagnostics={**agg.diagnostics, **extra})
