"""Ratings from pairwise votes and agreement between raters.

- :func:`bradley_terry`: the Bradley–Terry model ``P(i beats j) = σ(θ_i − θ_j)`` fitted by maximum
  likelihood with a small Gaussian prior on the strengths (``prior``: its precision; it keeps a
  model that never lost finite and vanishes as votes grow). A tie counts as half a win for each
  side. Strengths are centred (mean 0) and in natural log-odds.
- :func:`elo`: strengths on the Elo scale (``ELO_BASE + 400·θ/ln 10``: a 400-point gap is 10:1 odds).
- :func:`bootstrap_ratings`: percentile intervals of the Elo ratings over votes resampled with
  replacement (each resample refitted).
- :func:`unbounded`: the strengths the votes leave unbounded (a model that lost or won every vote
  it was in; groups of models the votes do not connect both ways), which the prior alone sets.
- :func:`cohen_kappa` (two raters on the same items) and :func:`fleiss_kappa` (a table of how many
  raters put each item in each category; the same number of raters per item).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Sequence

import numpy as np

ELO_BASE = 1200.0
ELO_SCALE = 400.0 / math.log(10.0)
MAX_NEWTON, MAX_STEP = 200, 2.0
PRIOR = 0.01  # precision of the N(0, 1/PRIOR) prior on each strength: about one hundredth of a vote


def unbounded(w: np.ndarray) -> tuple[dict[int, str], list[list[int]]]:
    """From a :func:`win_matrix`: the models whose maximum-likelihood strength is infinite (``"lost
    every vote"``, ``"won every vote"``) and the groups of models that beat each other both ways
    (strongly connected; more than one group: the distances between them are the prior's)."""
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import connected_components

    beat = np.asarray(w) > 0
    flags = {i: "lost every vote" for i in range(len(beat)) if not beat[i].any()}
    flags.update({i: "won every vote" for i in range(len(beat)) if beat[i].any() and not beat[:, i].any()})
    _, label = connected_components(csr_matrix(beat), directed=True, connection="strong")
    return flags, [[i for i in range(len(beat)) if label[i] == g] for g in sorted(set(label.tolist()))]


def win_matrix(winners: Sequence[int], losers: Sequence[int], ties: Sequence[bool], k: int,
               weights: Sequence[float] | None = None) -> np.ndarray:
    """``W[i, j]``: how many times i beat j (a tie: ½ to each side), from votes (winner, loser, tie)."""
    winners, losers = np.asarray(winners, int), np.asarray(losers, int)
    ties = np.asarray(ties, bool)
    weights = np.ones(len(winners)) if weights is None else np.asarray(weights, float)
    w = np.zeros((k, k))
    np.add.at(w, (winners[~ties], losers[~ties]), weights[~ties])
    np.add.at(w, (winners[ties], losers[ties]), 0.5 * weights[ties])
    np.add.at(w, (losers[ties], winners[ties]), 0.5 * weights[ties])
    return w


def bradley_terry(wins: np.ndarray, prior: float = PRIOR) -> np.ndarray:
    """The centred strengths θ (log-odds) that maximise ``Σ W[i,j]·log σ(θ_i−θ_j) − prior/2·Σθ²``
    (``wins`` k×k, or a stack R×k×k fitted at once)."""
    wins = np.asarray(wins, float)
    single = wins.ndim == 2
    stack = wins[None] if single else wins
    k = stack.shape[-1]
    if stack.ndim != 3 or stack.shape[-2] != k or (stack < 0).any():
        raise ValueError(f"wins must be square matrices of counts >= 0, got shape {wins.shape}")
    if prior <= 0:
        raise ValueError(f"prior must be > 0 (it keeps an unbeaten model finite), got {prior}")
    theta = np.zeros(stack.shape[:2])
    games = stack + np.swapaxes(stack, 1, 2)
    for _ in range(MAX_NEWTON):  # Newton's method on a strictly concave objective, steps clipped
        p = 1.0 / (1.0 + np.exp(-(theta[:, :, None] - theta[:, None, :])))
        grad = (stack - games * p).sum(axis=2) - prior * theta
        curv = games * p * (1.0 - p)
        hess = curv - np.eye(k) * (curv.sum(axis=2) + prior)[:, :, None]
        step = -np.linalg.solve(hess, grad[:, :, None])[:, :, 0]
        step = np.clip(step, -MAX_STEP, MAX_STEP)
        theta = theta + step
        if np.abs(step).max() < 1e-10:
            break
    theta = theta - theta.mean(axis=1, keepdims=True)
    return theta[0] if single else theta


def elo(theta: np.ndarray) -> np.ndarray:
    return ELO_BASE + ELO_SCALE * np.asarray(theta, float)


@dataclass
class Ratings:
    """Elo-scaled ratings of ``k`` models, their bootstrap intervals, and the votes behind each."""

    elo: np.ndarray
    low: np.ndarray
    high: np.ndarray
    votes: np.ndarray  # votes each model took part in
    level: float
    resamples: int


def bootstrap_ratings(winners: Sequence[int], losers: Sequence[int], ties: Sequence[bool], k: int, *,
                      n_resamples: int = 1000, confidence: float = 0.95, prior: float = PRIOR,
                      seed: int = 0) -> Ratings:
    """Bradley–Terry ratings of the votes and percentile intervals over votes resampled with replacement."""
    winners, losers = np.asarray(winners, int), np.asarray(losers, int)
    ties = np.asarray(ties, bool)
    n = len(winners)
    point = elo(bradley_terry(win_matrix(winners, losers, ties, k), prior))
    counts = np.bincount(np.concatenate([winners, losers]), minlength=k) if n else np.zeros(k, int)
    if n == 0:
        return Ratings(point, np.full(k, np.nan), np.full(k, np.nan), counts, confidence, 0)
    # resampling votes with replacement = a multinomial over the distinct (winner, loser, tie) cells,
    # weighted by how many votes each holds: memory grows with the cells (at most 2k²), not the votes
    cells, counts_per_cell = np.unique(np.stack([winners, losers, ties.astype(int)], axis=1), axis=0,
                                       return_counts=True)
    rng = np.random.default_rng(seed)
    weights = rng.multinomial(n, counts_per_cell / n, size=n_resamples)
    stack = np.stack([win_matrix(cells[:, 0], cells[:, 1], cells[:, 2].astype(bool), k, w) for w in weights])
    draws = elo(bradley_terry(stack, prior))
    tail = (1.0 - confidence) / 2.0 * 100.0
    low, high = np.percentile(draws, [tail, 100.0 - tail], axis=0)
    return Ratings(point, low, high, counts, confidence, n_resamples)


def cohen_kappa(first: Sequence[object], second: Sequence[object]) -> float | None:
    """Cohen's κ of two raters' labels of the same items; None with no item or when chance agreement is 1."""
    if len(first) != len(second):
        raise ValueError(f"two raters need the same items: {len(first)} vs {len(second)} labels")
    n = len(first)
    if n == 0:
        return None
    labels = sorted({*first, *second}, key=str)
    observed = sum(a == b for a, b in zip(first, second)) / n
    expected = sum((list(first).count(c) / n) * (list(second).count(c) / n) for c in labels)
    return None if expected >= 1.0 else (observed - expected) / (1.0 - expected)


def fleiss_kappa(table: np.ndarray) -> float | None:
    """Fleiss' κ of ``table[item, category]`` = raters who put the item in the category (same count per item)."""
    table = np.asarray(table, float)
    if table.ndim != 2 or table.shape[0] == 0:
        return None
    raters = table.sum(axis=1)
    if not np.allclose(raters, raters[0]) or raters[0] < 2:
        raise ValueError("Fleiss' kappa needs the same number (>= 2) of raters for every item")
    n, m = table.shape[0], raters[0]
    p_item = ((table ** 2).sum(axis=1) - m) / (m * (m - 1))
    p_cat = table.sum(axis=0) / (n * m)
    expected = float((p_cat ** 2).sum())
    return None if expected >= 1.0 else (float(p_item.mean()) - expected) / (1.0 - expected)
