"""``metric=[lpips]``: the learned perceptual distance (LPIPS v0.1) against the reference video.

Per frame (from ``skip_frames`` on), like PSNR/SSIM (:mod:`wfeval.metrics.reference`): the curve
lands in ``components["per_frame"]``, the sample's value is its mean. AlexNet by default
(``net: vgg`` for VGG16; the two give different numbers, so every row and the aggregate say
which). Torch on ``run.device``.

Weights (:mod:`wfeval.features.lpips_weights`) are only read, never fetched during a run: staged
with ``python -m wfeval.features.fetch lpips``, or files named in the config
(``backbone`` / ``heads``: recorded as ``official: false``). Without them every sample is a skip
whose reason is the command to run, and the aggregate has no value; the rest of the run is
unaffected. Every row records the net and both files' sha256; the aggregate records them once
with how they were checked, and refuses rows computed with different weights.
"""

from __future__ import annotations

import contextlib
import dataclasses
from typing import Any, Iterator, Sequence

from wfeval.api import AggregateResult, GenerationRequest, GenerationResult, MetricResult
from wfeval.features.lpips_weights import (
    BACKBONE_CHECK,
    FETCH_COMMAND,
    HEADS_CHECK,
    LPIPS_VERSION,
    NETS,
    UNCHECKED,
    LPIPSWeights,
    backbone_matches,
    resolve_lpips_weights,
)
from wfeval.features.weights import WeightsUnavailable
from wfeval.metrics.base import default_aggregate
from wfeval.metrics.outcomes import skipped
from wfeval.metrics.reference import _ReferenceMetric

WEIGHTS_MISSING = "LPIPS weights unavailable"


class _Unsupported(ValueError):
    """A sample LPIPS is not defined for (not RGB, too small): a skip, not an error."""


class LPIPS(_ReferenceMetric):
    """LPIPS v0.1 (Zhang et al. 2018) per frame, then averaged; 0 for identical frames."""

    name = "lpips"
    groups = ("reference",)
    aliases = ("learned_perceptual_image_patch_similarity",)
    version = "1.0"
    higher_is_better = False
    output_unit = "distance"
    display_name = "LPIPS"
    description = "Learned perceptual distance (LPIPS v0.1) against the reference video, per frame then averaged."
    variant = "lpips(v0.1, net=alex, input 2x/255-1, spatial mean, per frame then mean over frames)"
    bounds = (0.0, None)  # >= 0; the official heads bound it above (value_bounds)

    def __init__(self, net: str = "alex", backbone: str = "auto", heads: str = "auto", cache_dir: str | None = None,
                 data_range: float = 255.0, skip_frames: int = 0, confidence: float = 0.95, seed: int = 0,
                 device: str | None = None):
        if net not in NETS:
            raise ValueError(f"metric.lpips.net must be one of {', '.join(NETS)}, got {net!r}")
        self.net, self.backbone, self.heads, self.cache_dir = net, str(backbone), str(heads), cache_dir
        super().__init__(data_range, skip_frames, confidence, seed, device)
        self._weights: LPIPSWeights | None = None
        self._unavailable: str | None = None

    def value_bounds(self) -> tuple[float | None, float | None]:
        """[0, 2·Σ_layers max head weight] with the official heads (docs/metrics.md); [0, ∞) otherwise."""
        return (0.0, NETS[self.net].upper_bound if self.heads in ("auto", "") else None)

    def describe(self) -> str:
        official = "" if self._weights is None or self._weights.official else ", UNOFFICIAL weights"
        return (f"lpips(v{LPIPS_VERSION}, net={self.net}, input 2x/{self.data_range:g}-1, spatial mean, "
                f"per frame then mean over frames{official})")

    # -- weights, resolved once -----------------------------------------------------------------
    def _load(self) -> str | None:
        if self._weights is None and self._unavailable is None:
            try:
                self._weights = resolve_lpips_weights(self.net, self.backbone, self.heads, self.cache_dir)
            except WeightsUnavailable as exc:
                hint = "" if FETCH_COMMAND in str(exc) else f"; stage them with `{FETCH_COMMAND} --net {self.net}`"
                self._unavailable = f"{WEIGHTS_MISSING}, no LPIPS: {exc}{hint}"
        return self._unavailable

    def cache_identity(self) -> dict[str, Any]:
        """For the metric-result cache: the files behind ``auto`` (replaced files: another identity)."""
        self._load()
        w = self._weights
        return {"backbone_sha256": w.backbone_sha256 if w else None, "heads_sha256": w.heads_sha256 if w else None}

    @contextlib.contextmanager
    def one_cpu_thread(self) -> Iterator[None]:
        yield  # convolutions gain from torch's intra-op threads (unlike the small per-sample sums of PSNR/SSIM)

    # -- per sample -----------------------------------------------------------------------------
    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        reason = self._load()
        if reason:
            return skipped(request.sample_id, self.name, reason,
                           category=f"no weights: run {FETCH_COMMAND} --net {self.net}")
        try:
            row = super().compute_sample(request, result)
        except _Unsupported as exc:
            return skipped(request.sample_id, self.name, str(exc))
        assert self._weights is not None
        w = self._weights
        record = {"net": w.net, "official": w.official, "backbone_sha256": w.backbone_sha256,
                  "heads_sha256": w.heads_sha256}
        return dataclasses.replace(row, diagnostics={**row.diagnostics, "weights": record})

    def score(self, preds, target):
        from wfeval.features.lpips import MIN_SIZE
        from wfeval.functional.perceptual import lpips

        h, w, c = preds.shape[-3:]
        if c != 3:
            raise _Unsupported(f"LPIPS needs RGB frames (3 channels), got {c}")
        if min(h, w) < MIN_SIZE[self.net]:
            raise _Unsupported(f"LPIPS-{self.net} needs frames of at least {MIN_SIZE[self.net]}×{MIN_SIZE[self.net]}, "
                               f"got {h}×{w}")
        curve = self.to_numpy(lpips(preds, target, data_range=self.data_range, per_frame=True, weights=self._weights))
        low, high = self.bounds
        if not ((curve >= low).all() and (high is None or (curve <= high).all())):
            raise ValueError(f"LPIPS values {curve.min():.6g}..{curve.max():.6g} outside the provable range "
                             f"[{low}, {high}]: the weights or the computation are wrong")
        return curve.mean(), curve, {"net": self.net}

    # -- over the set ---------------------------------------------------------------------------
    def aggregate(self, results: Sequence[MetricResult]) -> AggregateResult:
        """The default mean with its interval, plus the weights every scored row used (rows computed
        with different weights are never averaged together: the aggregate is then invalid)."""
        agg = default_aggregate(self.name, results, aggregator=self.aggregator, statistics=self.statistics,
                                ci=self.ci, confidence=self.confidence, seed=self.seed, bounds=self.bounds)
        used = {tuple(sorted((r.diagnostics.get("weights") or {}).items())) for r in results  # scored rows
                if r.status == "ok"}  # (a "fail" row is a failed generation at the worst value: no weights)
        if len(used) > 1:
            return dataclasses.replace(agg, valid=False, diagnostics={
                **agg.diagnostics, "reason": "rows were computed with different LPIPS networks or weights; never "
                                             "averaged together", "weights_seen": [dict(u) for u in sorted(used)]})
        if used:
            record = weights_record(dict(next(iter(used))))
            agg = dataclasses.replace(agg, diagnostics={**agg.diagnostics, "lpips": record})
        elif not agg.valid:  # nothing scored: when for want of weights, the reason says what to do
            missing = next((r.skip_reason for r in results
                            if str(r.skip_reason or "").startswith(WEIGHTS_MISSING)), None)
            if missing:
                agg = dataclasses.replace(agg, diagnostics={**agg.diagnostics, "reason": missing})
        return agg


def weights_record(row_weights: dict[str, Any]) -> dict[str, Any]:
    """The aggregate's record of the weights from a row's: hashes, how each was checked, official."""
    net = str(row_weights.get("net"))
    files = NETS.get(net)
    backbone_sha, heads_sha = str(row_weights.get("backbone_sha256")), str(row_weights.get("heads_sha256"))
    backbone_ok = files is not None and backbone_matches(backbone_sha, net)
    heads_ok = files is not None and heads_sha == files.heads_sha256
    return {"net": net, "version": LPIPS_VERSION, "official": backbone_ok and heads_ok,
            "backbone_sha256": backbone_sha,
            "backbone_check": BACKBONE_CHECK.format(prefix=files.backbone_prefix) if backbone_ok
            else UNCHECKED.format(what="torchvision backbone"),
            "heads_sha256": heads_sha,
            "heads_check": HEADS_CHECK if heads_ok else UNCHECKED.format(what=f"{net} heads")}
