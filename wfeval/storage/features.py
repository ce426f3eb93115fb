"""On-disk caches of I3D features, keyed by content so they are reused across models and runs.

* :class:`FeatureStore`: the ``.npy`` feature vector of a video under
  ``<root>/features/<weights sha256[:16]>-<recipe digest[:16]>/ab/<video sha256>/<sha256>.npy``,
  named by the sha256 of its own bytes. The :class:`~wfeval.api.ArtifactRef` returned for it is
  what a per-sample FVD result persists, so an aggregate can be rebuilt from ``metrics.jsonl``
  alone. Stored content is never replaced: I3D's bytes depend on the thread count, so the same
  video computed again elsewhere (another run, another machine sharing the cache, after a prune)
  may give other bytes; they go to a file of their own and every row keeps pointing at the bytes
  it was computed from. :meth:`FeatureStore.get` hands out an existing file only after checking
  its bytes against its name (a corrupt one is removed). Files of older caches
  (``ab/<video sha256>.npy``) are still read.
* :class:`ReferenceStatsCache`: the float64 sums of a whole reference set under
  ``<root>/reference_stats/<key>.npz``, the key being the sha256 of (the sorted sha256s of the
  reference *feature files*, the recipe digest, the weights sha256): statistics of other bytes
  are never served. The file is sealed as every store record is (:mod:`wfeval.storage.seal`: a
  ``seal`` entry over the sha256 of each array, keyed by the cache root's ``seal.key``); a file
  edited, damaged or written before seals existed is refused (logged, naming the file) and the
  statistics are computed again from the feature files.
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
from wfeval.storage.seal import SEAL, UNREADABLE, RecordRefused, Sealer

FEATURE_KIND = "i3d_features"
STATS_VERSION = 1


class FeatureStore:
    """Content-addressed feature vectors of one (weights, recipe) pair."""

    def __init__(self, root: str | Path, weights_sha256: str, recipe_digest: str):
        self.root = Path(root).expanduser().resolve()
        self.weights_sha256, self.recipe_digest = weights_sha256, recipe_digest
        self.folder = self.root / layout.FEATURES / f"{weights_sha256[:16]}-{recipe_digest[:16]}"

    def path(self, video_sha256: str) -> Path:
        """Where an older cache kept the one feature file of a video (still read, never written)."""
        return self.folder / video_sha256[:2] / f"{video_sha256}.npy"

    def _dir(self, video_sha256: str) -> Path:
        return self.folder / video_sha256[:2] / video_sha256

    def _ref(self, video_sha256: str, path: Path, data: bytes, shape: Sequence[int], dtype: str) -> ArtifactRef:
        return ArtifactRef(kind=FEATURE_KIND, uri=str(path), sha256=hashlib.sha256(data).hexdigest(),
                           media_type=NPY_MEDIA_TYPE, shape=tuple(shape), dtype=dtype,
                           metadata={"video_sha256": video_sha256, "recipe_digest": self.recipe_digest,
                                     "weights_sha256": self.weights_sha256})

    def has(self, video_sha256: str) -> bool:
        """Whether features of the video may be cached (cheap: nothing is read)."""
        folder = self._dir(video_sha256)
        found = folder.is_dir() and any(p.suffix == ".npy" for p in folder.iterdir())
        return found or self.path(video_sha256).exists()

    def get(self, video_sha256: str) -> ArtifactRef | None:
        """A ref to cached features of the video whose bytes match their name (the first by name), or
        None. A file whose bytes do not match is corrupt: it is removed, never served."""
        folder = self._dir(video_sha256)
        try:
            names = sorted(p.name for p in folder.iterdir() if p.suffix == ".npy" and not p.name.startswith("."))
        except OSError:
            names = []
        for name in names:
            path = folder / name
            try:
                data = path.read_bytes()
                if hashlib.sha256(data).hexdigest() != name[:-len(".npy")]:
                    path.unlink(missing_ok=True)
                    continue
                array = np.load(io.BytesIO(data), allow_pickle=False)
            except (OSError, ValueError, EOFError):
                continue
            return self._ref(video_sha256, path, data, array.shape, str(array.dtype))
        legacy = self.path(video_sha256)
        try:
            data = legacy.read_bytes()
            array = np.load(io.BytesIO(data), allow_pickle=False)
        except (OSError, ValueError, EOFError):
            return None
        return self._ref(video_sha256, legacy, data, array.shape, str(array.dtype))

    def put(self, video_sha256: str, features: np.ndarray) -> ArtifactRef:
        """Keep ``features`` under the sha256 of their bytes (nothing is replaced: the same bytes are
        the same file, other bytes another file) and return a ref to them."""
        data = array_bytes(np.asarray(features))
        path = self._dir(video_sha256) / f"{hashlib.sha256(data).hexdigest()}.npy"
        if not path.exists():
            atomic_write_bytes(path, data)
        return self._ref(video_sha256, path, data, features.shape, str(features.dtype))


def reference_set_sha256(video_sha256s: Sequence[str]) -> str:
    """Content hash of a set: its members' sha256s, sorted (order-free, duplicates count)."""
    return hashlib.sha256("\n".join(sorted(video_sha256s)).encode()).hexdigest()


class ReferenceStatsCache:
    """Accumulated statistics of reference sets, keyed by (the hash of the set of feature files, recipe
    digest, weights sha256)."""

    def __init__(self, root: str | Path):
        root = Path(root).expanduser().resolve()
        self.folder = layout.folder(root, layout.REFERENCE_STATS)
        self.seal = Sealer(root)

    @staticmethod
    def key(set_sha256: str, recipe_digest: str, weights_sha256: str) -> str:
        payload = {"set": set_sha256, "recipe": recipe_digest, "weights": weights_sha256, "version": STATS_VERSION}
        return hashlib.sha256(json.dumps(payload, sort_keys=True).encode()).hexdigest()

    def path(self, key: str) -> Path:
        return self.folder / f"{key}.npz"

    @staticmethod
    def _digests(arrays: dict[str, np.ndarray]) -> dict[str, str]:
        """What the seal covers: each array's name and the sha256 of its canonical ``.npy`` bytes."""
        return {name: hashlib.sha256(array_bytes(np.asarray(a))).hexdigest() for name, a in sorted(arrays.items())}

    def load(self, key: str) -> FrechetStats | None:
        path = self.path(key)
        try:
            try:
                with np.load(path, allow_pickle=False) as data:
                    arrays = dict(data)
            except FileNotFoundError:
                return None
            except (ValueError, EOFError, OSError) as exc:
                raise RecordRefused(path, UNREADABLE, f"unreadable ({type(exc).__name__})") from None
            seal = arrays.pop(SEAL, None)
            self.seal.verify(f"reference_stats/{key}", self._digests(arrays), None if seal is None else str(seal), path)
            return FrechetStats.from_arrays(arrays)
        except RecordRefused as refusal:
            self.seal.refused(refusal, "reference statistics", "compute again")
            return None
        except (OSError, ValueError, KeyError):
            return None

    def save(self, key: str, stats: FrechetStats) -> Path:
        buffer = io.BytesIO()
        arrays = stats.to_arrays()
        seal = self.seal.seal_of(f"reference_stats/{key}", self._digests(arrays))
        np.savez(buffer, **arrays, **{SEAL: np.array(seal)})
        atomic_write_bytes(self.path(key), buffer.getvalue())
        return self.path(key)
