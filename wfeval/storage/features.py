"""On-disk caches of I3D features, keyed by content so they are reused across models and runs.

* :class:`FeatureStore`: one ``.npy`` feature vector per video under
  ``<root>/features/<weights sha256[:16]>-<recipe digest[:16]>/ab/<video sha256>.npy``; the
  :class:`~wfeval.api.ArtifactRef` returned for it (with its own sha256) is what a per-sample
  FVD result persists, so an aggregate can be rebuilt from ``metrics.jsonl`` alone.
* :class:`ReferenceStatsCache`: the float64 sums of a whole reference set under
  ``<root>/reference_stats/<key>.npz``, the key being the sha256 of (the sorted sha256s of the
  reference videos, the recipe digest, the weights sha256).
"""

from __future__ import annotations

import hashlib
import io
import json
from pathlib import Path
from typing import Sequence

import numpy as np

from wfeval.api import ArtifactRef
from wfeval.stats.frechet import FrechetStats
from wfeval.storage import layout
from wfeval.storage.artifacts import NPY_MEDIA_TYPE, array_bytes, atomic_write_bytes

FEATURE_KIND = "i3d_features"
STATS_VERSION = 1


class FeatureStore:
    """Content-addressed feature vectors of one (weights, recipe) pair."""

    def __init__(self, root: str | Path, weights_sha256: str, recipe_digest: str):
        self.root = Path(root).expanduser().resolve()
        self.weights_sha256, self.recipe_digest = weights_sha256, recipe_digest
        self.folder = self.root / layout.FEATURES / f"{weights_sha256[:16]}-{recipe_digest[:16]}"

    def path(self, video_sha256: str) -> Path:
        return self.folder / video_sha256[:2] / f"{video_sha256}.npy"

    def _ref(self, video_sha256: str, data: bytes, shape: Sequence[int], dtype: str) -> ArtifactRef:
        return ArtifactRef(kind=FEATURE_KIND, uri=str(self.path(video_sha256)), sha256=hashlib.sha256(data).hexdigest(),
                           media_type=NPY_MEDIA_TYPE, shape=tuple(shape), dtype=dtype,
                           metadata={"video_sha256": video_sha256, "recipe_digest": self.recipe_digest,
                                     "weights_sha256": self.weights_sha256})

    def get(self, video_sha256: str) -> ArtifactRef | None:
        """A ref to the cached features of the video, or None (missing or unreadable)."""
        try:
            data = self.path(video_sha256).read_bytes()
            array = np.load(io.BytesIO(data), allow_pickle=False)
        except (OSError, ValueError, EOFError):
            return None
        return self._ref(video_sha256, data, array.shape, str(array.dtype))

    def put(self, video_sha256: str, features: np.ndarray) -> ArtifactRef:
        data = array_bytes(np.asarray(features))
        atomic_write_bytes(self.path(video_sha256), data)
        return self._ref(video_sha256, data, features.shape, str(features.dtype))


def reference_set_sha256(video_sha256s: Sequence[str]) -> str:
    """Content hash of a reference set: its videos' sha256s, sorted (order-free, duplicates count)."""
    return hashlib.sha256("\n".join(sorted(video_sha256s)).encode()).hexdigest()


class ReferenceStatsCache:
    """Accumulated statistics of reference sets, keyed by (set hash, recipe digest, weights sha256)."""

    def __init__(self, root: str | Path):
        self.folder = layout.folder(Path(root).expanduser().resolve(), layout.REFERENCE_STATS)

    @staticmethod
    def key(set_sha256: str, recipe_digest: str, weights_sha256: str) -> str:
        payload = {"set": set_sha256, "recipe": recipe_digest, "weights": weights_sha256, "version": STATS_VERSION}
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.npz"

    def load(self, key: str) -> FrechetStats | None:
        try:
            with np.load(self.path(key), allow_pickle=False) as data:
                return FrechetStats.from_arrays(dict(data))
        except (OSError, ValueError, KeyError, EOFError):
            return None

    def save(self, key: str, stats: FrechetStats) -> Path:
        buffer = io.BytesIO()
        np.savez(buffer, **stats.to_arrays())
        atomic_write_bytes(self.path(key), buffer.getvalue())
        return self.path(key)
