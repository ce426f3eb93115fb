"""Fréchet distance between Gaussians, streaming statistics and a bootstrap, all in float64.

``d² = ‖μ₁ − μ₂‖² + tr Σ₁ + tr Σ₂ − 2 tr √(Σ₁ Σ₂)``. The trace term comes from eigenvalues, not
from ``scipy.linalg.sqrtm``: for any ``B`` with ``B Bᵀ = Σ₁`` (Cholesky factor, or ``V diag(√w)``
when ``Σ₁`` is singular) the eigenvalues of ``Σ₁ Σ₂`` are those of the symmetric PSD ``Bᵀ Σ₂ B``,
so ``tr √(Σ₁ Σ₂) = Σᵢ √λᵢ(Bᵀ Σ₂ B)``; eigenvalues below ``λ_max · d · ε`` (zero up to round-off,
as for rank-deficient covariances) count as 0 rather than adding √(noise) each.

From features with fewer samples than dimensions the same trace is the nuclear norm of
``X₁ X₂ᵀ / √(c₁ c₂)`` (centred features, ``c = N`` or ``N − 1``): an ``N₁ × N₂`` problem instead of
``d × d``, used by :func:`frechet_distance_features` and the bootstrap.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field

import numpy as np

from wfeval.utils.parallel import map_blas

COVARIANCE_DDOF = {"N": 0, "N-1": 1}  # StyleGAN-V divides by N, TF-GAN by N-1


def covariance_ddof(covariance: str) -> int:
    """Delta degrees of freedom of a covariance normalisation name: ``N`` → 0, ``N-1`` → 1."""
    try:
        return COVARIANCE_DDOF[covariance]
    except KeyError:
        raise ValueError(f"covariance must be 'N' (StyleGAN-V) or 'N-1' (TF-GAN), got {covariance!r}") from None


def _matrix(name: str, value: np.ndarray, dim: int) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.shape != (dim, dim):
        raise ValueError(f"{name} must have shape ({dim}, {dim}), got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} has non-finite entries")
    return (arr + arr.T) / 2


def trace_sqrt_product(cov1: np.ndarray, cov2: np.ndarray) -> float:
    """``tr √(Σ₁ Σ₂)`` for symmetric PSD matrices: eigenvalues of ``Bᵀ Σ₂ B`` with ``B Bᵀ = Σ₁``.

    ``B`` is the Cholesky factor when ``Σ₁`` is positive definite, else ``V diag(√w)`` from its
    eigen-decomposition (rank-deficient covariances).
    """
    try:
        b = np.linalg.cholesky(cov1)
    except np.linalg.LinAlgError:
        w, v = np.linalg.eigh(cov1)
        b = v * np.sqrt(np.clip(w, 0.0, None))
        inner = b.T @ cov2 @ b
    else:  # triangular products (BLAS trmm): half the flops of two general ones
        from scipy.linalg.blas import dtrmm

        left = dtrmm(1.0, np.asfortranarray(b), np.array(cov2, order="F"), lower=1, trans_a=1)  # Bᵀ Σ₂
        inner = dtrmm(1.0, np.asfortranarray(b), left, side=1, lower=1, overwrite_b=1)  # (Bᵀ Σ₂) B
    lam = np.linalg.eigvalsh((inner + inner.T) / 2)
    # eigenvalues that are zero up to round-off would add √(noise) each (rank-deficient covariances)
    lam[lam < max(lam.max(), 0.0) * lam.size * np.finfo(np.float64).eps] = 0.0
    return float(np.sqrt(lam).sum())


def frechet_distance(mu1: np.ndarray, cov1: np.ndarray, mu2: np.ndarray, cov2: np.ndarray) -> float:
    """Fréchet distance between N(mu1, cov1) and N(mu2, cov2) (float64; covariances symmetrised)."""
    m1, m2 = np.asarray(mu1, dtype=np.float64), np.asarray(mu2, dtype=np.float64)
    if m1.ndim != 1 or m1.shape != m2.shape:
        raise ValueError(f"mu1 and mu2 must be vectors of the same length, got {m1.shape} and {m2.shape}")
    if not (np.isfinite(m1).all() and np.isfinite(m2).all()):
        raise ValueError("mu1/mu2 have non-finite entries")
    c1, c2 = _matrix("cov1", cov1, m1.size), _matrix("cov2", cov2, m1.size)
    diff = m1 - m2
    parts = float(diff @ diff + np.trace(c1) + np.trace(c2))
    return _clean(parts - 2.0 * trace_sqrt_product(c1, c2), parts)


def _clean(value: float, scale: float) -> float:
    """0 for a distance that is zero up to round-off (|value| ≤ 1e-12 of its positive terms)."""
    return 0.0 if value <= 1e-12 * scale else float(value)


def _features(name: str, value: np.ndarray) -> np.ndarray:
    arr = np.asarray(value, dtype=np.float64)
    if arr.ndim != 2 or arr.shape[0] < 1:
        raise ValueError(f"{name} must be a non-empty [N, d] array, got shape {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{name} has non-finite entries")
    return arr


def frechet_distance_features(features1: np.ndarray, features2: np.ndarray, covariance: str = "N") -> float:
    """Fréchet distance of the Gaussians fitted to two feature sets ``[N, d]``."""
    x1, x2 = _features("features1", features1), _features("features2", features2)
    return _fd_features(x1, x2, covariance_ddof(covariance))[0]


def _fd_features(x1: np.ndarray, x2: np.ndarray, ddof: int) -> tuple[float, float]:
    """(distance, mean term) of two feature sets."""
    n1, n2, dim = x1.shape[0], x2.shape[0], x1.shape[1]
    if min(n1, n2) <= ddof:
        raise ValueError(f"need more than {ddof} samples per side for covariance 'N-1', got {n1} and {n2}")
    mu1, mu2 = x1.mean(axis=0), x2.mean(axis=0)
    y1, y2 = x1 - mu1, x2 - mu2
    c1, c2 = n1 - ddof, n2 - ddof
    diff = mu1 - mu2
    mean_term = float(diff @ diff)
    if min(n1, n2) <= dim:  # rank-deficient: the N1 x N2 route is exact and cheaper
        trace_sqrt = np.linalg.svd(y1 @ y2.T, compute_uv=False).sum() / math.sqrt(c1 * c2)
        parts = mean_term + (y1 * y1).sum() / c1 + (y2 * y2).sum() / c2
        return _clean(parts - 2.0 * trace_sqrt, parts), mean_term
    return frechet_distance(mu1, y1.T @ y1 / c1, mu2, y2.T @ y2 / c2), mean_term


@dataclass
class FrechetStats:
    """Streaming mean/covariance: float64 sums around a shift (the first batch's mean); O(d²) memory."""

    n: int = 0
    shift: np.ndarray | None = None
    total: np.ndarray | None = None
    outer: np.ndarray | None = field(default=None, repr=False)

    @property
    def dim(self) -> int | None:
        return None if self.shift is None else int(self.shift.size)

    def update(self, features: np.ndarray) -> FrechetStats:
        """Add a batch ``[n, d]`` of features (returns self)."""
        x = _features("features", features)
        if self.shift is None:
            self.shift = x.mean(axis=0)
            self.total = np.zeros_like(self.shift)
            self.outer = np.zeros((x.shape[1], x.shape[1]))
        elif x.shape[1] != self.shift.size:
            raise ValueError(f"feature dimension {x.shape[1]} differs from the accumulated {self.shift.size}")
        y = x - self.shift
        self.n += x.shape[0]
        self.total += y.sum(axis=0)
        self.outer += y.T @ y
        return self

    def mean(self) -> np.ndarray:
        self._need(1)
        return self.shift + self.total / self.n

    def cov(self, covariance: str = "N") -> np.ndarray:
        ddof = covariance_ddof(covariance)
        self._need(ddof + 1)
        centre = self.total / self.n
        return (self.outer - self.n * np.outer(centre, centre)) / (self.n - ddof)

    def merge(self, other: FrechetStats) -> FrechetStats:
        """The statistics of both sets together (a new object)."""
        if other.n == 0:
            return FrechetStats(self.n, *(None if a is None else a.copy()
                                          for a in (self.shift, self.total, self.outer)))
        out = FrechetStats(other.n, other.shift.copy(), other.total.copy(), other.outer.copy())
        if self.n == 0:
            return out
        delta = self.shift - out.shift  # re-centre self's sums on other's shift
        out.outer += self.outer + np.outer(delta, self.total) + np.outer(self.total, delta) \
            + self.n * np.outer(delta, delta)
        out.total += self.total + self.n * delta
        out.n += self.n
        return out

    def distance(self, other: FrechetStats, covariance: str = "N") -> float:
        return frechet_distance(self.mean(), self.cov(covariance), other.mean(), other.cov(covariance))

    def to_arrays(self) -> dict[str, np.ndarray]:
        self._need(1)
        return {"n": np.array(self.n), "shift": self.shift, "total": self.total, "outer": self.outer}

    @classmethod
    def from_arrays(cls, arrays: dict[str, np.ndarray]) -> FrechetStats:
        return cls(int(arrays["n"]), *(np.asarray(arrays[k], dtype=np.float64) for k in ("shift", "total", "outer")))

    def _need(self, n: int) -> None:
        if self.n < n:
            raise ValueError(f"need at least {n} feature vector(s), have {self.n}")


def rank_note(n_real: int, n_generated: int, dim: int) -> str | None:
    """Why the covariances are singular (rank ≤ N − 1 < d), or None when both are full rank."""
    if min(n_real, n_generated) > dim:
        return None
    return (f"covariance rank-deficient: N (real {n_real}, generated {n_generated}) ≤ feature dimension {dim}; "
            "FVD depends strongly on N — compare only at equal N")


def frechet_terms(real: FrechetStats | np.ndarray, generated: FrechetStats | np.ndarray,
                  covariance: str = "N") -> dict[str, float]:
    """``{"value", "mean_term", "covariance_term"}`` from two accumulated statistics or two feature sets.

    From features, fewer samples than dimensions take the ``N₁ × N₂`` route (no d × d
    eigen-decomposition), which is also what keeps small-N evaluations fast on a busy machine.
    """
    if isinstance(real, FrechetStats) and isinstance(generated, FrechetStats):
        mu_r, mu_g = real.mean(), generated.mean()
        value = frechet_distance(mu_r, real.cov(covariance), mu_g, generated.cov(covariance))
        mean_term = float(((mu_r - mu_g) ** 2).sum())
    else:
        x1, x2 = _features("real", real), _features("generated", generated)
        value, mean_term = _fd_features(x1, x2, covariance_ddof(covariance))
    return {"value": value, "mean_term": mean_term, "covariance_term": value - mean_term}


def _weighted_side(y: np.ndarray, counts: np.ndarray) -> tuple[np.ndarray, np.ndarray, int, np.ndarray]:
    """(rows drawn, their counts, N, weighted mean) of one resampled side (``y`` already centred)."""
    drawn = np.flatnonzero(counts)
    w = counts[drawn].astype(np.float64)
    rows = y[drawn]
    n = int(counts.sum())
    return rows, w, n, (w @ rows) / n


def _fd_weighted(y1: np.ndarray, w1: np.ndarray, n1: int, m1: np.ndarray, y2: np.ndarray, w2: np.ndarray,
                 n2: int, m2: np.ndarray, shift: np.ndarray, ddof: int) -> float:
    """The Fréchet distance of a resample given as distinct rows with multiplicities.

    Equal (to round-off) to :func:`_fd_features` on the rows repeated by their counts, at a cost of
    ``O(N·d²)`` (the d × d route: weighted second moments) or ``O(N²·d)`` (the N × N route, when a
    side has at most d draws): the resampled set itself is never built. ``y1``/``y2`` are the
    caller's own copies (rows drawn), scaled here in place.
    """
    c1, c2 = n1 - ddof, n2 - ddof
    diff = m1 - m2 + shift
    mean_term = float(diff @ diff)
    if min(n1, n2) <= y1.shape[1]:  # rank-deficient: nuclear norm of the √w-weighted N1 x N2 product
        a, b = (y1 - m1) * np.sqrt(w1)[:, None], (y2 - m2) * np.sqrt(w2)[:, None]
        trace_sqrt = np.linalg.svd(a @ b.T, compute_uv=False).sum() / math.sqrt(c1 * c2)
        parts = mean_term + (a * a).sum() / c1 + (b * b).sum() / c2
        return _clean(parts - 2.0 * trace_sqrt, parts)
    # Σ = (Σᵢ wᵢ yᵢ yᵢᵀ − n m mᵀ) / c: the rows stay centred on the whole set's mean (the resample's
    # mean m is small beside them), so the rank-one correction loses nothing and copies nothing
    cov1 = _weighted_gram(y1, w1, n1, m1) / c1
    cov2 = _weighted_gram(y2, w2, n2, m2) / c2
    parts = float(mean_term + np.trace(cov1) + np.trace(cov2))
    return _clean(parts - 2.0 * trace_sqrt_product(cov1, cov2), parts)


def _weighted_gram(rows: np.ndarray, w: np.ndarray, n: int, mean: np.ndarray) -> np.ndarray:
    """``Σᵢ wᵢ (yᵢ − m)(yᵢ − m)ᵀ`` as ``rowsᵀ diag(w) rows − n m mᵀ`` through BLAS ``syrk`` (half the
    flops of a general product; ``rows`` is scaled in place)."""
    from scipy.linalg.blas import dsyr, dsyrk

    rows *= np.sqrt(w)[:, None]
    upper = dsyrk(1.0, rows.T, trans=0)  # the F-ordered view: no copy
    upper = dsyr(-float(n), mean, a=upper, lower=0, overwrite_a=True)
    return np.triu(upper) + np.triu(upper, 1).T


def bootstrap_frechet(features1: np.ndarray, features2: np.ndarray, *, covariance: str = "N",
                      n_resamples: int = 1000, confidence: float = 0.95, seed: int = 0,
                      units1: np.ndarray | None = None, units2: np.ndarray | None = None,
                      workers: int | None = None) -> dict:
    """Percentile bootstrap interval of the Fréchet distance, seeded.

    Without ``units`` both sides are resampled independently (with replacement, each to its own
    size): right for two independent sets, but duplicates inflate the distance, badly so when
    N ≪ d. With ``units1``/``units2`` (the sampling unit — e.g. the benchmark sample — of each
    feature row) the units are resampled and every row follows its unit, on both sides: for
    paired sets (a reference and a generated video per sample) this keeps the pairing and the
    interval centred. The result also records the bootstrap mean and std.

    A resample is its multiplicities, never a copied set: each costs ``O(N·d²)`` (weighted second
    moments, then the d × d trace term; ``O(N²·d)`` below d draws), so N = 2048, d = 400 with 1000
    resamples takes seconds to tens of seconds on a CPU rather than hours.
    """
    boot = bootstrap_values(features1, features2, covariance=covariance, n_resamples=n_resamples, seed=seed,
                            units1=units1, units2=units2, confidence=confidence, workers=workers)
    alpha = 1.0 - confidence
    low, high = np.percentile(boot, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return {"method": "bootstrap_percentile", "level": float(confidence), "low": float(low), "high": float(high),
            "n_resamples": int(n_resamples), "n_used": int(boot.size), "seed": int(seed),
            "resampled": "independent videos, both sides" if units1 is None else "sampling units (paired), both sides",
            "bootstrap_mean": float(boot.mean()), "bootstrap_std": float(boot.std(ddof=1)) if boot.size > 1 else None}


def bootstrap_values(features1: np.ndarray, features2: np.ndarray, *, covariance: str = "N",
                     n_resamples: int = 1000, seed: int = 0, units1: np.ndarray | None = None,
                     units2: np.ndarray | None = None, confidence: float = 0.95,
                     workers: int | None = None) -> np.ndarray:
    """The distance of every usable resample of :func:`bootstrap_frechet` (same seed, same draws).

    Resamples run on ``workers`` threads (default: every CPU), each with single-threaded BLAS:
    independent small problems scale better that way than one multi-threaded BLAS call at a time,
    and the values do not depend on the number of workers.
    """
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence}")
    x1, x2 = _features("features1", features1), _features("features2", features2)
    ddof = covariance_ddof(covariance)
    rng = np.random.default_rng(seed)
    n1, n2 = x1.shape[0], x2.shape[0]
    if (units1 is None) != (units2 is None):
        raise ValueError("give both units1 and units2, or neither")
    if units1 is not None:
        u1, u2 = np.asarray(units1, dtype=np.int64), np.asarray(units2, dtype=np.int64)
        if u1.shape != (n1,) or u2.shape != (n2,) or min(u1.min(), u2.min()) < 0:
            raise ValueError("units1/units2 must hold one non-negative unit id per feature row")
        n_units = int(max(u1.max(), u2.max())) + 1
    # centred once on each side's mean (the mean difference is carried by `shift`): the weighted
    # moments below then have no large offsets to cancel
    s1, s2 = x1.mean(axis=0), x2.mean(axis=0)
    y1, y2, shift = x1 - s1, x2 - s2, s1 - s2
    draws = []  # multiplicities of every resample, drawn in order from the one seeded generator
    for _ in range(n_resamples):
        if units1 is None:
            k1 = np.bincount(rng.integers(0, n1, n1), minlength=n1)
            k2 = np.bincount(rng.integers(0, n2, n2), minlength=n2)
        else:
            counts = np.bincount(rng.integers(0, n_units, n_units), minlength=n_units)
            k1, k2 = counts[u1], counts[u2]
            if min(k1.sum(), k2.sum()) < ddof + 1:
                continue  # a resample without (enough) videos on one side has no distance
        draws.append((k1.astype(np.int32), k2.astype(np.int32)))

    def one(draw: tuple[np.ndarray, np.ndarray]) -> float:
        return _fd_weighted(*_weighted_side(y1, draw[0]), *_weighted_side(y2, draw[1]), shift, ddof)

    values = map_blas(one, draws, workers=workers)
    if not values:
        raise ValueError("no bootstrap resample had videos on both sides")
    return np.asarray(values)

