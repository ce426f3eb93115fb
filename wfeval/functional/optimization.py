"""The optimisation lift (decision-ladder rung L7; ``task=policy_optimization``): how much of the
simulator-trained policy's improvement over a random policy a policy trained inside the model keeps.

``lift = (mean model-trained return − mean random return) / (mean simulator-trained return − mean random
return)``: 1 when training inside the model is as good as training in the simulator, 0 when it is no
better than acting at random (negative: worse). Undefined (None) when the ceiling is not above the floor.
The interval resamples the units (one per training seed and held-out episode, the three returns of a
unit kept together) with replacement: a percentile bootstrap of the ratio of means.
"""

from __future__ import annotations

import numpy as np


def optimization_lift(model, simulator, random) -> float | None:
    m, s, r = (float(np.mean(np.asarray(x, dtype=np.float64))) for x in (model, simulator, random))
    return None if not s > r else (m - r) / (s - r)


def bootstrap_lift(model, simulator, random, *, n_resamples: int = 1000, confidence: float = 0.95,
                   seed: int = 0) -> tuple[float, float] | None:
    """Percentile interval of the lift over resampled units (None: fewer than 2 units, or no resample
    with a ceiling above its floor). Resamples whose ceiling is not above the floor are left out."""
    returns = np.stack([np.asarray(x, dtype=np.float64).reshape(-1) for x in (model, simulator, random)])
    n = returns.shape[1]
    if n < 2:
        return None
    picks = np.random.default_rng(seed).integers(0, n, size=(n_resamples, n))
    means = returns[:, picks].mean(axis=2)  # 3 × n_resamples
    span = means[1] - means[2]
    ok = span > 0
    if not ok.any():
        return None
    lifts = (means[0][ok] - means[2][ok]) / span[ok]
    alpha = 1.0 - confidence
    low, high = np.percentile(lifts, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return float(low), float(high)
