"""Calibration latent models that bracket every probe (``task=probing``; docs/latent-models.md).

Encoders:

- ``state_oracle`` (the ceiling): the exact state itself, each variable as its value and, for a
  discrete one, one indicator per value seen (a linear probe then reads every variable exactly);
- ``random_projection``: pixels scaled to [0, 1] times a fixed Gaussian matrix (seeded): what an
  untrained encoder keeps;
- ``pixels_pca``: the leading principal components of the training episodes' pixels.

Predictors (``predictor``): ``oracle`` (the latent imagined ``k`` steps ahead is the encoding of
the true frame ``k`` steps ahead: what a perfect predictor reaches with this encoder) and
``static`` (z never moves: the latent ``k`` steps ahead is the present one).
"""

from __future__ import annotations

import mmap
from typing import Any

import numpy as np

from wfeval.functional.rank import distinct_rows
from wfeval.utils.parallel import one_blas_thread

PREDICTORS = ("oracle", "static")


class CalibrationEncoder:
    """Base: the predictor and the identity; ``encode`` per subclass."""

    version = "1.0"
    kind = ""

    def __init__(self, name: str | None = None, predictor: str = "oracle", dim: int = 64, seed: int = 0):
        if predictor not in PREDICTORS:
            raise ValueError(f"model.predictor: {predictor!r} is not one of {', '.join(PREDICTORS)}")
        if int(dim) < 1:
            raise ValueError(f"model.dim must be >= 1, got {dim}")
        self.name = name or self.kind
        self.predictor, self.dim, self.seed = predictor, int(dim), int(seed)

    @property
    def imagines_truth(self) -> bool:
        return self.predictor == "oracle"

    def predict(self, z: Any, actions: Any) -> np.ndarray:
        """``static``: the present latent for every action (``oracle`` is served by the driver from
        the true future, see wfeval/models/latent.py)."""
        if self.predictor != "static":
            raise RuntimeError(f"{self.name}: the oracle predictor needs the true future frames (task=probing)")
        z = np.asarray(z, dtype=np.float64)
        actions = np.asarray(actions)
        k = actions.shape[1] if actions.ndim > 1 else 1  # N×k ids or N×k×A vectors (a dataset's actions)
        return np.repeat(z[:, None, :], k, axis=1)

    def fingerprint(self) -> dict[str, Any]:
        return {"kind": self.kind, "predictor": self.predictor, "dim": self.dim, "seed": self.seed}


def _pixels(frames: Any) -> np.ndarray:
    frames = np.asarray(frames)
    return frames.reshape(len(frames), -1).astype(np.float64) / 255.0


class StateOracle(CalibrationEncoder):
    """The exact state as the latent (the ceiling of every probe)."""

    kind = "state_oracle"
    needs_state = True

    def encode(self, frames: Any, states: Any = None, discrete: Any = None) -> np.ndarray:
        if states is None:
            raise ValueError("state_oracle encodes the exact state: it serves task=probing only")
        states = np.asarray(states, dtype=np.float64)
        columns = [states]
        for j, is_discrete in enumerate(discrete if discrete is not None else [False] * states.shape[1]):
            if is_discrete:  # one indicator per integer value in a fixed range: linear probes read classes
                values = np.arange(-4, 65)
                columns.append((np.rint(states[:, j])[:, None] == values[None, :]).astype(np.float64))
        return np.concatenate(columns, axis=1)


#: above this width a random projection projects each distinct frame of a batch once (its product is
#: most of a wide probing run: 12,288 pixels × 4,096 columns a frame; a gridworld batch repeats frames
#: wherever the agent stood still: 335 distinct of 1,056), and those as differences (:func:`project_differences`).
#: A row's float sums may depend on its place in the batch (as they do on ``protocol.encode_frames``): the
#: latents agree to round-off, and narrower projections stay as they were
DISTINCT_WIDTH = 512
#: a frame that differs from its anchor in at most this share of its values is projected as that difference
ANCHOR_SHARE = 0.25
#: the differences are multiplied block by block of this many values (8 RGB pixels), only where they are not 0
BLOCK = 24
#: when more than this share of the (frame, block) pairs is not 0, the frames are multiplied whole instead
DENSE_SHARE = 0.5


def anchors(rows: np.ndarray, share: float = ANCHOR_SHARE) -> np.ndarray:
    """Each row's anchor (an index): the latest anchor before it when the two differ in at most ``share`` of
    their values, else the row itself (a new anchor). A video's frames differ from an earlier one where
    something moved: a gridworld frame from its episode's first in ~5% of its values."""
    out = np.empty(len(rows), dtype=np.intp)
    anchor = -1
    for i, row in enumerate(rows):
        if anchor < 0 or np.count_nonzero(row != rows[anchor]) > share * row.size:
            anchor = i
        out[i] = anchor
    return out


def project_differences(rows: np.ndarray, matrix: np.ndarray, block: int = BLOCK) -> np.ndarray | None:
    """``(rows / 255) @ matrix`` for uint8 ``rows`` (N × P) that mostly differ from one another in few places:
    each row is projected as its difference to its anchor (:func:`anchors`; an anchor as itself), block by
    block of ``block`` values, each block's product taken only for the rows not 0 there (one pass over the
    matrix: ~5% of the whole product on gridworld's frames), and each anchor's latent added to the latents
    of its rows. The same latents as the whole product to round-off (each a sum in another order, of
    differences of pixels); None (nothing computed) when more than :data:`DENSE_SHARE` of the (row, block)
    pairs is not 0, where the whole product is the cheaper."""
    x = rows.astype(np.int16)
    anchor = anchors(x)
    follows = anchor != np.arange(len(x))
    x[follows] -= x[anchor[follows]]  # each follower's difference to its anchor (an anchor's own row is read)
    starts = np.arange(0, x.shape[1], block)
    occupied = np.logical_or.reduceat(x != 0, starts, axis=1)
    if occupied.mean() > DENSE_SHARE:
        return None
    out = np.zeros((len(x), matrix.shape[1]))
    with one_blas_thread():  # small products: two library threads wait on each other on a busy machine
        for b in np.flatnonzero(occupied.any(axis=0)):
            at, span = np.flatnonzero(occupied[:, b]), slice(starts[b], starts[b] + block)
            out[at] += (x[at, span] / 255.0) @ matrix[span]
    out[follows] += out[anchor[follows]]
    return out


def _small_pages(rows: int, columns: int) -> np.ndarray:
    """An uninitialised float64 ``rows × columns`` array in memory of the system's ordinary pages (an anonymous
    ``mmap``): numpy asks the kernel for huge pages for an array this large, whose first writes cost a wide
    projection's 400 MB 0.2–1.5 s of system time on a machine whose memory is in use (the kernel compacting
    it to find them) against ~0.3 s, for products that read it no slower."""
    return np.frombuffer(mmap.mmap(-1, rows * columns * 8), dtype=np.float64).reshape(rows, columns)


class RandomProjection(CalibrationEncoder):
    """Pixels in [0, 1] times a fixed N(0, 1/P) matrix of ``dim`` columns (seeded)."""

    kind = "random_projection"
    _matrix: np.ndarray | None = None

    def encode(self, frames: Any) -> np.ndarray:
        frames = np.asarray(frames)
        pixels = int(np.prod(frames.shape[1:]))
        if self._matrix is None or self._matrix.shape[0] != pixels:
            memory = _small_pages(pixels, self.dim) if self.dim > DISTINCT_WIDTH else np.empty((pixels, self.dim))
            matrix = np.random.default_rng(self.seed).standard_normal(out=memory)  # filled in order: the same values
            matrix /= np.sqrt(pixels)  # in place: the values of a new array, without a second (P × dim) copy
            self._matrix = matrix
        if self.dim <= DISTINCT_WIDTH:
            return _pixels(frames) @ self._matrix
        first, inverse = distinct_rows(frames.reshape(len(frames), -1))
        distinct = frames[first].reshape(len(first), -1)
        z = project_differences(distinct, self._matrix) if distinct.dtype == np.uint8 else None
        return (_pixels(distinct) @ self._matrix if z is None else z)[inverse]


class PixelsPCA(CalibrationEncoder):
    """The first ``dim`` principal components of the training pixels (``fit`` before ``encode``)."""

    kind = "pixels_pca"
    _mean: np.ndarray | None = None
    _components: np.ndarray | None = None

    def fit(self, frames: Any) -> None:
        x = _pixels(frames)
        self._mean = x.mean(axis=0)
        centred = x - self._mean
        # the principal axes from the N×N Gram matrix (N frames << P pixels): the same axes as the SVD's
        values, vectors = np.linalg.eigh(centred @ centred.T)
        keep = np.argsort(values)[::-1][: self.dim]
        keep = keep[values[keep] > 1e-9 * max(values.max(), 1e-300)]
        axes = (vectors[:, keep].T @ centred) / np.sqrt(values[keep])[:, None]
        self._components = np.ascontiguousarray(axes.T)  # P × dim

    def encode(self, frames: Any) -> np.ndarray:
        if self._components is None:
            raise RuntimeError("pixels_pca: fit(frames) on training episodes first (task=probing does)")
        return (_pixels(frames) - self._mean) @ self._components
