"""Fréchet Video Distance over in-memory videos: ``fvd(real_videos, generated_videos, ...)``.

Videos are uint8 arrays ``[T, H, W, 3]`` (or grayscale ``[T, H, W]``), given as one ``[N, T, H, W, C]``
array or any iterable of arrays (a generator streams: statistics accumulate in float64 sums, so
memory does not grow with N unless a bootstrap needs the features). Defaults are the StyleGAN-V
recipe: 16 first frames, bilinear resize to 224, [-1, 1], covariance divided by N, TF-hub I3D
weights (fetched and cached on first use, see :mod:`wfeval.features.weights`).
"""

from __future__ import annotations

import hashlib
from collections import Counter, OrderedDict
from dataclasses import dataclass, field
from typing import Any, Iterable

import numpy as np

from wfeval.features.preprocess import FEATURE_NAME, ClipRecipe, ClipTooShort, select_clip
from wfeval.stats.frechet import FrechetStats, bootstrap_frechet, covariance_ddof, frechet_terms, rank_note

_MEMO_SIZE = 4096  # features of recently seen identical clips are reused (bounded)


@dataclass(frozen=True)
class FVDResult:
    """An FVD value with everything needed to compare it: N per side, dimension, recipe, weights."""

    value: float
    n_real: int
    n_generated: int
    feature_dim: int
    rank_deficient: bool
    covariance: str
    recipe: dict
    weights: dict
    mean_term: float
    covariance_term: float
    confidence_interval: dict = field(default_factory=dict)
    skipped: dict = field(default_factory=dict)

    def __float__(self) -> float:
        return self.value

    def to_dict(self) -> dict[str, Any]:
        return dict(self.__dict__)


class _Collector:
    """Clips → features in batches; identical clips (by content hash, in ``memo``) are extracted once.

    Feature rows are kept while there are at most as many as dimensions (or always, for a
    bootstrap): small sets then take the exact N × N route; beyond, only the O(d²) sums remain.
    """

    def __init__(self, extractor: Any, keep: bool, progress: Any, memo: OrderedDict[str, np.ndarray]):
        self.extractor, self.keep, self.progress, self.memo = extractor, keep, progress, memo
        self.stats = FrechetStats()
        self.kept: list[np.ndarray] | None = []
        self.pending: list[tuple[str, np.ndarray]] = []

    def add(self, clip: np.ndarray) -> None:
        tag = f"{clip.shape}{clip.dtype}".encode()
        key = hashlib.sha256(np.ascontiguousarray(clip).tobytes() + tag).hexdigest()
        self.pending.append((key, clip))
        new = len({k for k, _ in self.pending if k not in self.memo})
        if new >= self.extractor.batch_size or len(self.pending) >= 8 * self.extractor.batch_size:
            self.flush()

    def flush(self) -> None:
        todo = {k: c for k, c in self.pending if k not in self.memo}
        for key, row in zip(todo, self.extractor.features(list(todo.values()))):
            self.memo[key] = row
        rows = np.stack([self.memo[k] for k, _ in self.pending]) if self.pending else None
        for key, _ in self.pending:
            self.memo.move_to_end(key)
        while len(self.memo) > _MEMO_SIZE:
            self.memo.popitem(last=False)
        if rows is not None:
            self.stats.update(rows)
            if self.kept is not None:
                self.kept.append(rows)
                if not self.keep and self.stats.n > rows.shape[1]:
                    self.kept = None
            if self.progress is not None:
                self.progress.update(len(rows))
        self.pending = []


def _collect(videos: Iterable[np.ndarray], side: str, recipe: ClipRecipe, extractor: Any, keep: bool,
             progress_mode: str, skipped: Counter, memo: OrderedDict[str, np.ndarray]) -> _Collector:
    from wfeval.storage.artifacts import array_bytes
    from wfeval.utils.progress import Progress

    total = len(videos) if hasattr(videos, "__len__") else 0  # a generator's length is unknown: 0
    show = progress_mode != "off" and not (progress_mode == "auto" and 0 < total <= 64)
    progress = Progress(f"i3d features ({side})", total, progress_mode) if show else None
    collector = _Collector(extractor, keep, progress, memo)
    for video in videos:
        video = np.asarray(video)
        key = hashlib.sha256(array_bytes(video)).hexdigest() if recipe.clip_selection == "random" else ""
        try:
            clip, _ = select_clip(video, recipe, key)
        except ClipTooShort as exc:
            skipped[f"{side}: {exc}"] += 1
            continue
        collector.add(clip)
    collector.flush()
    if progress is not None:
        progress.close()
    return collector


def fvd(real_videos: Iterable[np.ndarray], generated_videos: Iterable[np.ndarray], *, clip_length: int | None = 16,
        clip_selection: str = "first", seed: int = 0, resize: int = 224, resize_mode: str = "bilinear",
        value_range: tuple[float, float] = (0.0, 255.0), covariance: str = "N", weights: str = "auto",
        cache_dir: str | None = None, fetch: bool = True, device: str = "auto", batch_size: int | None = None,
        bootstrap: int = 0, bootstrap_mode: str = "independent", confidence: float = 0.95,
        progress: str = "auto") -> FVDResult:
    """FVD between two sets of videos; videos shorter than the clip are skipped and counted.

    ``bootstrap > 0`` adds a percentile interval from that many resamples (seeded by ``seed``):
    ``independent`` resamples each side on its own (two unrelated sets; the duplicates drawn
    inflate the distance), ``paired`` resamples positions and keeps real[i] with generated[i]
    (equal-length, paired sets, e.g. predictions of the same test clips). ``progress``: ``auto``
    (shown beyond 64 videos or for iterables of unknown length), ``bar``, ``log`` or ``off``.
    ``batch_size``: clips per I3D forward pass (``None``: the device's default, 2 on a CPU, 32 on a
    GPU). Raises :class:`wfeval.features.weights.WeightsUnavailable` when no weights can be had,
    ``ValueError`` when a side has fewer than 2 usable videos or a setting is out of range.
    """
    from wfeval.features.extractor import I3DExtractor
    from wfeval.features.weights import resolve_weights

    ddof = covariance_ddof(covariance)
    if batch_size is not None and (isinstance(batch_size, bool) or not isinstance(batch_size, int) or batch_size < 1):
        raise ValueError(f"batch_size must be a positive number of clips or None (the device's default), "
                         f"got {batch_size!r}")
    if bootstrap_mode not in ("independent", "paired"):
        raise ValueError(f"bootstrap_mode must be independent or paired, got {bootstrap_mode!r}")
    recipe = ClipRecipe(clip_length, clip_selection, seed, resize, resize_mode, tuple(value_range))
    info = resolve_weights(weights, cache_dir, fetch=fetch)
    extractor = I3DExtractor(info, recipe, device=device, batch_size=batch_size)  # None: the device's default
    skipped: Counter = Counter()
    memo: OrderedDict[str, np.ndarray] = OrderedDict()
    real = _collect(real_videos, "real", recipe, extractor, bootstrap > 0, progress, skipped, memo)
    gen = _collect(generated_videos, "generated", recipe, extractor, bootstrap > 0, progress, skipped, memo)
    for side, got in (("real", real.stats.n), ("generated", gen.stats.n)):
        if got < max(2, ddof + 1):
            raise ValueError(f"FVD needs at least 2 usable {side} videos, got {got}"
                             + (f" (skipped: {dict(skipped)})" if skipped else ""))
    small = real.kept is not None and gen.kept is not None
    terms = (frechet_terms(np.concatenate(real.kept), np.concatenate(gen.kept), covariance) if small
             else frechet_terms(real.stats, gen.stats, covariance))
    interval = {}
    if bootstrap > 0:
        units = {}
        if bootstrap_mode == "paired":
            if skipped or real.stats.n != gen.stats.n:
                raise ValueError("bootstrap_mode='paired' needs as many usable real as generated videos and no "
                                 f"skips, got {real.stats.n} and {gen.stats.n} (skipped: {dict(skipped)})")
            units = {"units1": np.arange(real.stats.n), "units2": np.arange(gen.stats.n)}
        interval = bootstrap_frechet(np.concatenate(real.kept), np.concatenate(gen.kept), covariance=covariance,
                                     n_resamples=bootstrap, confidence=confidence, seed=seed, **units)
    dim = real.stats.dim or 0
    return FVDResult(
        value=terms["value"], n_real=real.stats.n, n_generated=gen.stats.n, feature_dim=dim,
        rank_deficient=rank_note(real.stats.n, gen.stats.n, dim) is not None, covariance=covariance,
        recipe={**recipe.to_dict(), "covariance": covariance, "feature": FEATURE_NAME},
        weights=info.to_dict(), mean_term=terms["mean_term"], covariance_term=terms["covariance_term"],
        confidence_interval=interval, skipped=dict(skipped),
    )
