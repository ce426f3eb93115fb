"""The effective rank of a set of latents (RankMe; Garrido et al. 2023, "RankMe: assessing the
downstream performance of pretrained self-supervised representations by their rank"): a collapse
check beside the probes (``task=probing``; docs/latent-models.md).

For N latents of width D (an N×D matrix ``Z``) with singular values ``σ₁ … σ_m`` (m = min(N, D)),
``p_k = σ_k / Σ σ + ε`` and the effective rank is ``exp(−Σ p_k log p_k)``: 1 for latents on one
line through the origin (a collapsed encoder: every frame encoded alike), ``m`` for latents whose
singular values are all equal, in between otherwise. The latents are taken as they are (not
centred), as RankMe does, so a constant non-zero encoding has rank 1, not 0.
"""

from __future__ import annotations

import numpy as np

from wfeval.utils.parallel import one_blas_thread

#: RankMe's ε (keeps log finite for zero singular values)
EPS = 1e-7


#: latents wider than this have their repeated rows decomposed once (:func:`_rows_once`): the same singular
#: values to round-off, and an SVD of a 1,056 × 4,096 training set of 718 distinct rows at half the cost;
#: narrower ones are decomposed as they are (their numbers unchanged)
ROWS_ONCE_WIDTH = 512


def distinct_rows(rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(the index of each distinct row's first occurrence, each row's index among them): ``rows[first][inverse]``
    is ``rows``. Rows are the same when their bytes are."""
    seen: dict[bytes, int] = {}
    first: list[int] = []
    inverse = np.empty(len(rows), dtype=np.intp)
    for i, row in enumerate(rows):
        inverse[i] = seen.setdefault(row.tobytes(), len(seen))
        if inverse[i] == len(first):
            first.append(i)
    return np.asarray(first, dtype=np.intp), inverse


def _rows_once(z: np.ndarray) -> np.ndarray:
    """Each distinct row of ``z`` once (:func:`distinct_rows`), times the square root of its count: ``Zᵀ Z`` is this
    matrix's, so its singular values are those of ``z`` (the rest zero)."""
    first, inverse = distinct_rows(z)
    return z[first] * np.sqrt(np.bincount(inverse))[:, None] if len(first) < len(z) else z


def effective_rank(z: np.ndarray) -> float:
    """RankMe of ``z`` (N×D): ``exp`` of the entropy of its normalised singular values; 0 for latents
    that are all zero (no direction at all)."""
    z = np.asarray(z, dtype=np.float64)
    if z.ndim != 2 or 0 in z.shape:
        raise ValueError(f"effective_rank: expected an N×D matrix of latents, got shape {z.shape}")
    peak = float(np.max(np.abs(z)))
    if not np.isfinite(peak):
        raise ValueError("effective_rank: the latents hold NaN or infinity")
    if peak == 0.0:
        return 0.0
    rows = _rows_once(z) if z.shape[1] > ROWS_ONCE_WIDTH else z
    with one_blas_thread():  # a decomposition's library threads wait on each other on a busy machine
        sigma = np.linalg.svd(rows / peak, compute_uv=False)  # scaled first: the rank does not depend on the scale
    sigma = np.concatenate([sigma, np.zeros(min(z.shape) - len(sigma))])  # the repeated rows' zeros
    p = sigma / sigma.sum() + EPS
    return float(np.exp(-np.sum(p * np.log(p))))
