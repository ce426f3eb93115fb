"""Fréchet Video Distance (``metric=fvd``): I3D Kinetics-400 features, Fréchet distance, bootstrap CI.

Per sample, :meth:`FVD.compute_sample` extracts (or finds in the feature cache) the I3D features
of the sample's reference video (``request.references[reference_key]``) and generated video
(``result.artifacts[generated_key]``), and returns a row whose ``artifact_refs`` point at the
cached feature files. **A per-sample row is not an FVD**: its ``raw_value`` is ``None`` with status
``ok``; FVD exists only for a set. :meth:`FVD.aggregate` reads the features back from the refs (so
it works on rows reloaded from ``metrics.jsonl`` or merged from several runs), fits the two
Gaussians and reports the distance (``diagnostics["value"]``, ``raw_stats["fvd"]``) with N per side,
the recipe, the weights' sha256, a rank-deficiency flag and a bootstrap confidence interval.

The reference set is every sample's reference that could be read, also for samples whose
generation failed (they are ``skip`` rows that still carry ``reference_features``), so it is the
same for every model on a benchmark; its statistics are cached by content hash.
"""

from __future__ import annotations

import dataclasses
import hashlib
from collections import Counter
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from wfeval.api import AggregateResult, ArtifactRef, GenerationRequest, GenerationResult, MetricResult
from wfeval.features.preprocess import FEATURE_NAME, ClipRecipe, ClipTooShort, clip_start, select_clip
from wfeval.features.weights import FETCH_COMMAND, WeightsInfo, WeightsUnavailable, resolve_weights
from wfeval.metrics.base import BaseMetric, whole_set_fields
from wfeval.metrics.outcomes import skipped
from wfeval.stats.frechet import FrechetStats, bootstrap_frechet, covariance_ddof, frechet_terms, rank_note
from wfeval.storage.artifacts import ArtifactError, array_bytes, read_array
from wfeval.storage.features import FeatureStore, ReferenceStatsCache, reference_set_sha256
from wfeval.utils.paths import cache_dir as resolve_cache_dir

REF, GEN = "reference_features", "generated_features"
PER_SAMPLE_NOTE = "per-sample rows carry I3D feature refs, raw_value None: FVD is defined for the whole set only"


class FVD(BaseMetric):
    name = "fvd"
    groups = ("distribution",)
    aliases = ("frechet_video_distance",)
    version = "1.0"
    required_artifacts = ()  # a missing generated video is handled here, so its reference still counts
    higher_is_better = False
    aggregator = "fvd"
    statistics = ("fvd",)
    family = "distribution"
    output_unit = "fvd"
    description = "Fréchet distance between I3D (Kinetics-400) features of real and generated videos."
    reproducibility = "deterministic"
    bounds = (0.0, None)  # a distance; its interval is a bootstrap of distances, never below 0
    internal_parameters = ()  # seed is an option: it draws random clip windows and the bootstrap

    def __init__(self, clip_length: int | None = 16, clip_selection: str = "first", resize: int = 224,
                 resize_mode: str = "bilinear", covariance: str = "N", reference_key: str = "video",
                 generated_key: str = "generated_video", weights: str = "auto", fetch: bool = True,
                 cache_dir: str | None = None, feature_dir: str | None = None, device: str | None = None,
                 batch_size: int | None = None, bootstrap: int = 1000, bootstrap_mode: str = "paired",
                 confidence: float = 0.95, seed: int = 0):
        super().__init__(confidence, seed)
        covariance_ddof(covariance)  # validates
        if bootstrap < 0:
            raise ValueError(f"metric.fvd.bootstrap must be >= 0 (0 disables the interval), got {bootstrap}")
        if bootstrap_mode not in ("paired", "independent"):
            raise ValueError(f"metric.fvd.bootstrap_mode must be paired or independent, got {bootstrap_mode!r}")
        self.bootstrap_mode = bootstrap_mode
        self.clip = ClipRecipe(clip_length, clip_selection, seed, resize, resize_mode)
        self.covariance, self.bootstrap = covariance, bootstrap
        self.reference_key, self.generated_key = reference_key, generated_key
        self.weights_spec, self.fetch, self.cache_dir = weights, fetch, cache_dir
        self.feature_dir = feature_dir
        if batch_size is not None and batch_size < 1:
            raise ValueError(f"metric.fvd.batch_size must be >= 1 (or null: chosen per device), got {batch_size}")
        self.device, self.batch_size = device or "auto", batch_size
        self.recipe = {**self.clip.to_dict(), "covariance": covariance, "feature": FEATURE_NAME}
        self._extractor: Any = None
        self._weights: WeightsInfo | None = None
        self._unavailable: str | None = None
        self._recompute = False  # run.recompute=[fvd]: features extracted again, nothing served from a cache
        self._fresh: dict[str, ArtifactRef] = {}  # features extracted by this process, by video sha256

    def force_recompute(self) -> None:
        """``run.recompute``: extract every feature and the reference statistics again (stored next to
        any cached ones, never replacing them: rows of other runs keep their bytes)."""
        self._recompute = True

    # -- resources, built on first use ------------------------------------------------------------
    def _root(self) -> Path:
        return Path(self.feature_dir).expanduser() if self.feature_dir else resolve_cache_dir(self.cache_dir) / "fvd"

    def _load(self) -> str | None:
        """Resolve the weights once; the reason they cannot be had, or None. The network itself is
        built by :meth:`_network` only when a feature is missing from the cache."""
        if self._weights is None and self._unavailable is None:
            try:
                self._weights = resolve_weights(self.weights_spec, self.cache_dir, fetch=self.fetch)
            except WeightsUnavailable as exc:
                hint = "" if FETCH_COMMAND in str(exc) else f"; fetch them once with `{FETCH_COMMAND}`"
                self._unavailable = f"I3D weights unavailable, no FVD: {exc}{hint}"
        return self._unavailable

    def _network(self) -> Any:
        if self._extractor is None:
            from wfeval.features.extractor import I3DExtractor

            assert self._weights is not None
            self._extractor = I3DExtractor(self._weights, self.clip, device=self.device,
                                           batch_size=self.batch_size)
        return self._extractor

    def cache_identity(self) -> dict[str, Any]:
        """For the metric-result cache: the weights behind ``weights: auto`` (a replaced file is
        another identity)."""
        self._load()
        return {"weights_sha256": self._weights.sha256 if self._weights is not None else None}

    # -- many samples at once -------------------------------------------------------------------
    def prepare(self, pairs: Sequence[tuple[GenerationRequest, GenerationResult]]) -> int:
        """Extract the missing features of many samples, clips of different samples sharing a
        forward pass (up to ``batch_size``), before :meth:`compute_sample` reads them back.

        Best effort: a video that cannot be read or is too short is left to compute_sample, which
        reports it on its own sample. Holds at most one batch of clips. Returns the number extracted.
        """
        return self._extract_missing(art for request, result in pairs
                                     for art in (request.references.get(self.reference_key),
                                                 result.artifacts.get(self.generated_key)))

    def prepare_references(self, requests: Iterable[GenerationRequest]) -> int:
        """Extract the missing features of the requests' reference videos: they do not depend on
        the model, so an overlapped run extracts them while the model generates its first samples
        (a video's features do not depend on its batch mates: the rows are those :meth:`prepare`
        would make). Best effort, as :meth:`prepare`; returns the number extracted."""
        return self._extract_missing(request.references.get(self.reference_key) for request in requests)

    def _extract_missing(self, arts: Iterable[ArtifactRef | None]) -> int:
        if self._load():
            return 0
        store, pending, seen, done = self._store(), {}, set(), 0
        for art in arts:
            if art is None or not art.sha256 or art.sha256 in seen:
                continue
            seen.add(art.sha256)
            if art.sha256 in self._fresh or (not self._recompute and store.has(art.sha256)):
                continue
            try:
                pending[art.sha256] = select_clip(read_array(art), self.clip, art.sha256)[0]
            except (ArtifactError, ClipTooShort, ValueError):
                continue
            if len(pending) >= self._network().batch_size:
                done += self._extract(store, pending)
        return done + self._extract(store, pending)

    def _extract(self, store: FeatureStore, pending: dict[str, np.ndarray]) -> int:
        if pending:
            for sha, row in zip(pending, self._network().features(list(pending.values()))):
                self._fresh[sha] = store.put(sha, row)
        n = len(pending)
        pending.clear()
        return n

    def _store(self) -> FeatureStore:
        assert self._weights is not None
        return FeatureStore(self._root(), self._weights.sha256, self.clip.digest())

    # -- per sample -----------------------------------------------------------------------------
    def compute_sample(self, request: GenerationRequest, result: GenerationResult) -> MetricResult:
        videos = {"reference": request.references.get(self.reference_key),
                  "generated": result.artifacts.get(self.generated_key)}
        if videos["reference"] is None and videos["generated"] is None:
            return skipped(request.sample_id, self.name, f"no reference video {self.reference_key!r} and no "
                           f"generated video {self.generated_key!r}")
        reason = self._load()
        if reason:
            return skipped(request.sample_id, self.name, reason)
        store, refs, problems, starts = self._store(), {}, {}, {}
        todo: list[tuple[str, str, np.ndarray]] = []
        for role, art in videos.items():
            if art is None:
                continue
            video = None if art.sha256 else read_array(art)
            sha = art.sha256 or hashlib.sha256(array_bytes(video)).hexdigest()
            hit = self._fresh.get(sha) or (None if self._recompute else store.get(sha))  # this content, recipe, weights
            if hit is not None:
                refs[role] = hit
                frames = art.shape[0] if art.shape else (video.shape[0] if video is not None else None)
                starts[role] = None if frames is None else _start_or_none(frames, self.clip, sha)
                continue
            video = read_array(art) if video is None else video
            try:
                clip, starts[role] = select_clip(video, self.clip, sha)
            except (ClipTooShort, ValueError) as exc:
                problems[role] = f"{role} video: {exc}"
                continue
            todo.append((role, sha, clip))
        unique = {sha: clip for _, sha, clip in todo}  # an exact copy of the reference is extracted once
        if unique:
            rows = self._network().features(list(unique.values()))
            saved = {sha: store.put(sha, row) for sha, row in zip(unique, rows)}
            self._fresh.update(saved)
            refs.update({role: saved[sha] for role, sha, _ in todo})
        return self._row(request, result, refs, problems, starts)

    def _row(self, request: GenerationRequest, result: GenerationResult, refs: dict[str, ArtifactRef],
             problems: dict[str, str], starts: dict[str, int | None]) -> MetricResult:
        assert self._weights is not None
        artifact_refs = {f"{role}_features": ref for role, ref in refs.items()}
        components = {"clip_start": starts,
                      "video_sha256": {role: ref.metadata["video_sha256"] for role, ref in refs.items()}}
        diagnostics = {"recipe_digest": self.clip.digest(), "weights_sha256": self._weights.sha256,
                       "weights_format": self._weights.format, "note": PER_SAMPLE_NOTE}
        if "generated" not in refs:
            if "generated" in problems:
                reason = problems["generated"]
            else:
                reason = f"missing required artifact(s) {self.generated_key}"
                if result.status != "ok":
                    reason += f" (generation {result.status}" + (f": {result.error})" if result.error else ")")
            base = skipped(request.sample_id, self.name, reason, **diagnostics)
            return dataclasses.replace(base, artifact_refs=artifact_refs, components=components)
        if "reference" not in refs:
            reason = problems.get("reference", f"no reference video {self.reference_key!r}: FVD needs real videos")
            return dataclasses.replace(skipped(request.sample_id, self.name, reason, **diagnostics),
                                       artifact_refs=artifact_refs, components=components)
        return MetricResult(sample_id=request.sample_id, metric_id=self.name, raw_value=None, components=components,
                            diagnostics={**diagnostics, "status": "ok"}, artifact_refs=artifact_refs)

    # -- over the set ---------------------------------------------------------------------------
    def aggregate(self, results: Sequence[MetricResult]) -> AggregateResult:
        """FVD of all generated features (ok rows) against all reference features (ok and skip rows)."""
        counts = Counter(r.status for r in results)
        rows = sorted((r for r in results if r.artifact_refs and r.status in ("ok", "skip")),
                      key=lambda r: r.sample_id)
        gen_refs = [(i, r.artifact_refs[GEN]) for i, r in enumerate(rows)
                    if r.status == "ok" and GEN in r.artifact_refs]
        real_refs = [(i, r.artifact_refs[REF]) for i, r in enumerate(rows) if REF in r.artifact_refs]
        diagnostics: dict[str, Any] = {
            "status_counts": {s: counts.get(s, 0) for s in ("ok", "fail", "skip", "error")},
            "coverage": len(gen_refs) / len(results) if results else 0.0,
            "aggregator": "fvd", "recipe": self.recipe, "recipe_digest": self.clip.digest(),
            "per_sample": PER_SAMPLE_NOTE,
        }
        base = whole_set_fields(self.name, results)

        def invalid(reason: str) -> AggregateResult:
            return AggregateResult(**base, n_valid=0, n_skipped=len(results), valid=False,
                                   diagnostics={**diagnostics, "reason": reason})

        keyed = {(r.diagnostics.get("recipe_digest"), r.diagnostics.get("weights_sha256")) for r in rows}
        if len(keyed) > 1:
            return invalid("rows were computed with different feature recipes or weights; never mixed into one FVD")
        if keyed and next(iter(keyed))[0] != self.clip.digest():
            return invalid("rows were computed with another feature recipe than this metric's config")
        if not counts.get("ok"):  # the wording of every metric's aggregate (wfeval.metrics.base)
            return invalid(f"no item was scored: all {len(results)} skipped or errored" if results else "no items")
        if len(gen_refs) < 2 or len(real_refs) < 2:
            return invalid(f"FVD needs features of at least 2 generated and 2 reference videos, got "
                           f"{len(gen_refs)} and {len(real_refs)}")
        weights_sha = next(iter(keyed))[1]
        try:  # with a bootstrap both feature sets are needed anyway, and give the estimate too
            gen = _load_features([ref for _, ref in gen_refs])
            real = _load_features([ref for _, ref in real_refs]) if self.bootstrap else None
            real_stats, cache_note = self._reference_stats([ref for _, ref in real_refs], weights_sha, real)
        except ArtifactError as exc:
            return invalid(f"{exc}; re-score the run (run.from_run=...) to recompute the features")
        gen_stats = FrechetStats().update(gen[_sha_order(gen_refs)])
        terms = frechet_terms(real_stats if real is None else real, gen_stats if real is None else gen,
                              self.covariance)
        interval = {}
        if real is not None:
            units = {} if self.bootstrap_mode == "independent" else {
                "units1": np.array([i for i, _ in real_refs]), "units2": np.array([i for i, _ in gen_refs])}
            interval = bootstrap_frechet(real, gen, covariance=self.covariance, n_resamples=self.bootstrap,
                                         confidence=self.confidence, seed=self.seed, **units)
        n_real, n_gen, dim = real_stats.n, gen_stats.n, int(gen.shape[1])
        note = rank_note(n_real, n_gen, dim)
        formats = {r.diagnostics.get("weights_format") for r in rows} - {None}
        diagnostics.update(
            value=terms["value"], n_real=n_real, n_generated=n_gen, feature_dim=dim, rank_deficient=note is not None,
            rank_note=note, weights={"sha256": weights_sha, "format": ",".join(sorted(formats)) or None},
            reference_set_sha256=reference_set_sha256([r.metadata["video_sha256"] for _, r in real_refs]),
            # only the content-derived key: whether the cache was hit is how this process got the
            # numbers, not part of the result (replay and shard merges must reproduce it exactly)
            reference_stats={"key": cache_note["key"]},
        )
        return AggregateResult(
            **base, n_valid=len(gen_refs), n_skipped=len(results) - len(gen_refs),
            raw_stats={"fvd": terms["value"], "mean_term": terms["mean_term"],
                       "covariance_term": terms["covariance_term"], "n_real": n_real, "n_generated": n_gen,
                       "feature_dim": dim},
            confidence_interval=interval, stderr=interval.get("bootstrap_std"), valid=True, diagnostics=diagnostics,
        )

    def _reference_stats(self, refs: list[ArtifactRef], weights_sha: str, features: np.ndarray | None = None
                         ) -> tuple[FrechetStats, dict[str, Any]]:
        """The reference set's statistics from the cache, or computed (in video-sha order) and cached.

        They give the estimate when there is no bootstrap (the reference features are then not read
        at all on a cache hit); with one, the estimate comes from the features themselves.
        """
        cache = ReferenceStatsCache(self._root())
        # keyed by the feature files' own hashes: statistics of other bytes (another thread count) never serve
        key = cache.key(reference_set_sha256([r.sha256 for r in refs]), self.clip.digest(), weights_sha)
        stats = None if self._recompute else cache.load(key)
        note = {"key": key, "cache": "hit"}
        if stats is None:
            features = _load_features(refs) if features is None else features
            stats = FrechetStats().update(features[_sha_order(list(enumerate(refs)))])
            try:
                cache.save(key, stats)
                note["cache"] = "miss (saved)"
            except OSError as exc:
                note["cache"] = f"miss (not saved: {exc.strerror or exc})"
        return stats, note


def _load_features(refs: Sequence[ArtifactRef]) -> np.ndarray:
    """Feature vectors ``[N, d]`` (float64) in the order given, checksums verified."""
    return np.stack([read_array(r, verify=True).astype(np.float64).reshape(-1) for r in refs])


def _sha_order(indexed: Sequence[tuple[int, ArtifactRef]]) -> np.ndarray:
    """Row order by video sha256: statistics summed in an order-free, hence reproducible, order."""
    return np.array(sorted(range(len(indexed)), key=lambda j: indexed[j][1].metadata.get("video_sha256", "")))


def _start_or_none(n_frames: int, recipe: ClipRecipe, sha: str) -> int | None:
    try:
        return clip_start(n_frames, recipe, sha)
    except ClipTooShort:
        return None
