"""Probe metrics (``task=probing``): how much of the exact state a model's latents hold.

They read the scores the probing driver records per held-out episode
(``result.metadata["probing"]``, wfeval/protocols/probing.py):

- ``probe_r2``: the mean over the continuous state variables of the episode's
  ``1 − MSE / training variance`` (R² of the ridge probe against predicting the training mean;
  0 is chance, 1 exact). The mean over equal-length episodes is the pooled out-of-sample R², and
  its interval is a bootstrap over episodes;
- ``probe_accuracy``: the mean over the discrete variables of the share of frames whose class
  the probe names (chance: the training majority class's share, in the components);
- ``imagined_probe_r2``: ``probe_r2`` on latents the model imagined ``k`` steps ahead from the
  true actions (the same probes, fit on encoded frames), read against the true state at ``t + k``:
  a curve over ``k`` of how long the prediction keeps the state. One metric with its ``horizons``
  (default 1, 2, 4, 8, 16) and one measurement per horizon, ``imagined_probe_r2_k<k>``
  (:meth:`ImaginedProbeR2.measurements`); ``metric=[imagined_probe_r2_k4]`` asks for one of them.

A variable whose training variance is 0 (it never moved in training) has no R²: it is left out
of the mean and named in the components.

Each aggregate carries, beside the score, what it reads against (``diagnostics``): ``chance`` (0 for
R²: the training mean; for accuracy the training majority's share, averaged over episodes) and
``ceiling`` (1: the exact state read back, what ``model=state_oracle`` reaches), the mean per
variable (``variables``) and the effective rank of the episodes' latents (``effective_rank``,
RankMe, of ``latent_dim``: a collapsed encoder sits near 1). An imagined R² below
:data:`OFF_RANGE_R2` is flagged ``off_range``: the predictor leaves the encoder's range (an
uncorrelated guess drawn from the state's own spread scores −1), and the number is not one to
compare.
"""

from __future__ import annotations

import dataclasses
from typing import Any, ClassVar, Mapping, Sequence

import numpy as np

from wfeval.api import AggregateResult, GenerationRequest, GenerationResult, MetricResult
from wfeval.metrics.outcomes import scored, skipped
from wfeval.metrics.registry import DescribedMetric

NO_PROBES = "no probe scores in the result (run with task=probing)"
#: an imagined probe R² below this is flagged: the imagined latents lie outside the range the probes
#: were fit on (seen: −1,100 for an untrained model whose observed probe read −0.86)
OFF_RANGE_R2 = -1.0
#: components that are not a state variable's score
NOT_VARIABLES = ("chance", "left_out", "effective_rank", "latent_dim")


class _ProbeMetric(DescribedMetric):
    groups = ("probing",)
    version = "1.0"
    higher_is_better = True
    family = "probing"
    capability = "state"
    kind: ClassVar[str] = "continuous"
    horizon: ClassVar[int] = 0  # 0: observed frames; k: imagined k steps ahead

    def _scores(self, result: GenerationResult) -> Mapping[str, Any] | None:
        info = result.metadata.get("probing") if result.status == "ok" else None
        if not isinstance(info, Mapping):
            return None
        return info.get("observed") if not self.horizon else (info.get("imagined") or {}).get(str(self.horizon))

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        scores = self._scores(result)
        if scores is None:
            info = result.metadata.get("probing") if result.status == "ok" else None
            if result.status != "ok":
                why = f"generation {result.status}: {result.error or ''}".strip()
            elif info is None:
                why = NO_PROBES
            elif self.horizon >= int(info.get("frames") or 0):
                why = f"episode too short for k={self.horizon} ({info.get('frames')} frames)"
            else:
                why = f"k={self.horizon} is not among protocol.horizons"
            return skipped(request.sample_id, self.name, why)
        field = "r2" if self.kind == "continuous" else "accuracy"
        mine = {name: s for name, s in scores.items() if s.get("kind") == self.kind}
        values = {name: s[field] for name, s in mine.items() if s.get(field) is not None and np.isfinite(s[field])}
        if not values:
            return skipped(request.sample_id, self.name, f"no {self.kind} state variable with a score")
        components: dict[str, Any] = {name: float(v) for name, v in values.items()}
        left_out = sorted(set(mine) - set(values))
        if left_out:
            components["left_out"] = left_out  # no training variance: no R²
        if self.kind == "discrete":
            components["chance"] = float(np.mean([mine[n]["chance"] for n in values]))
        info = result.metadata["probing"]
        if isinstance(info.get("effective_rank"), (int, float)):
            components.update(effective_rank=float(info["effective_rank"]), latent_dim=int(info["latent_dim"]))
        return scored(request.sample_id, self.name, float(np.mean(list(values.values()))), components=components)

    def aggregate(self, results: Sequence[MetricResult]) -> AggregateResult:
        """The mean with its interval, and beside it chance, ceiling, the mean per variable and the
        latents' effective rank; an imagined R² below :data:`OFF_RANGE_R2` flagged ``off_range``."""
        agg = super().aggregate(results)
        rows = [r.components or {} for r in results if r.status in ("ok", "fail")]
        if not rows:
            return agg
        chances = [float(c["chance"]) for c in rows if isinstance(c.get("chance"), (int, float))]
        extra: dict[str, Any] = {"chance": float(np.mean(chances)) if self.kind == "discrete" and chances else 0.0,
                                 "ceiling": 1.0}
        names = dict.fromkeys(k for c in rows for k, v in c.items()  # a variable's score: a number
                              if k not in NOT_VARIABLES and isinstance(v, (int, float)) and not isinstance(v, bool))
        extra["variables"] = {n: float(np.mean([c[n] for c in rows if isinstance(c.get(n), (int, float))]))
                              for n in names}
        ranks = [float(c["effective_rank"]) for c in rows if isinstance(c.get("effective_rank"), (int, float))]
        if ranks:
            extra.update(effective_rank=float(np.mean(ranks)), latent_dim=int(rows[0].get("latent_dim") or 0))
        value = agg.diagnostics.get("value")
        if self.horizon and isinstance(value, (int, float)) and value < OFF_RANGE_R2:
            extra["off_range"] = True
        return dataclasses.replace(agg, diagnostics={**agg.diagnostics, **extra})


class ProbeR2(_ProbeMetric):
    name = "probe_r2"
    output_unit = "R² (1 exact, 0 chance)"
    display_name = "Probe R² (observed)"
    description = "Out-of-sample R² of ridge probes from the latents of observed frames to the continuous state."
    variant = "ridge on standardised latents; R² against the training mean; mean over variables"
    bounds = (None, 1.0)


class ProbeAccuracy(_ProbeMetric):
    name = "probe_accuracy"
    kind = "discrete"
    output_unit = "fraction of frames"
    display_name = "Probe accuracy (observed)"
    description = "Accuracy of ridge-classifier probes from observed latents to the discrete state variables."
    variant = "ridge classifier (one-hot targets, argmax); mean over variables; chance in components"
    bounds = (0.0, 1.0)


HORIZONS = (1, 2, 4, 8, 16)  # the imagined probes' default horizons (protocol.horizons' default too)


class ImaginedProbeR2(ProbeR2):
    """``probe_r2`` on latents imagined ``k`` steps ahead, for each ``k`` of ``horizons``: one metric, one
    measurement per horizon (``imagined_probe_r2_k<k>``, :meth:`measurements`). A run scores the
    measurements; an instance of one horizon is that measurement."""

    name = "imagined_probe_r2"
    display_name = "Probe R² (imagined)"
    description = "probe_r2 on latents the model imagined k steps ahead from the true actions, one measurement per k."

    def __init__(self, horizons: Sequence[int] = (1, 2, 4, 8, 16), confidence: float = 0.95, seed: int = 0):
        super().__init__(confidence=confidence, seed=seed)
        ks = [int(k) for k in horizons or ()]
        if not ks or any(k < 1 for k in ks) or len(set(ks)) != len(ks):
            raise ValueError(f"imagined_probe_r2: horizons must be distinct positive step counts, got {list(horizons or [])}")
        self.horizons = tuple(ks)
        if len(ks) == 1:  # the measurement of one horizon
            k = ks[0]
            self.name, self.horizon = self.measurement_id(k), k
            self.display_name = f"Probe R² (imagined, k={k})"
            self.description = f"probe_r2 on latents the model imagined {k} step(s) ahead from the true actions."

    @staticmethod
    def measurement_id(k: int) -> str:
        return f"imagined_probe_r2_k{int(k)}"

    @classmethod
    def measurement_options(cls) -> dict[str, dict[str, Any]]:
        """The measurements a run may ask for by id (``metric=[imagined_probe_r2_k4]``), each with the
        options that make this metric score it alone."""
        return {cls.measurement_id(k): {"horizons": [k]} for k in HORIZONS}

    def measurements(self) -> dict[str, "ImaginedProbeR2"]:
        """Measurement id -> the metric that scores it, one per horizon in ``horizons``' order."""
        if len(self.horizons) == 1:
            return {self.name: self}
        return {self.measurement_id(k): type(self)(horizons=[k], confidence=self.confidence, seed=self.seed)
                for k in self.horizons}

    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        if len(self.horizons) != 1:
            raise TypeError(f"{self.name} with horizons {list(self.horizons)} has one measurement per horizon: "
                            "score each of measurements()")
        return super().compute_sample(request, result)
