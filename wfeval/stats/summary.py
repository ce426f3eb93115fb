"""Aggregate per-sample metric values into statistics with confidence intervals.

Every public function returns plain Python ``float``/``int``/``None`` values (never
numpy scalars, never NaN) so results can be passed straight to ``json.dump``.
Inputs must be finite: infinities/NaNs raise ``ValueError`` naming the index,
callers are expected to deal with them before aggregation.
"""
from __future__ import annotations

import difflib
import math
import re
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import Callable, Sequence

import numpy as np

AGGREGATORS = ("mean", "ratio", "geomean", "median")
CI_METHODS = ("auto", "none", "normal", "wilson", "bootstrap")
STATISTICS = ("mean", "std", "stderr", "min", "max", "median", "sum", "ratio", "geomean", "p<k>")
_PCT_RE = re.compile(r"p(\d+(?:\.\d+)?)")
_BOOT_CHUNK = 2_000_000  # max resampled elements held in memory at once


@dataclass(frozen=True)
class Summary:
    """Result of :func:`summarize`.

    ``value`` is the headline number (mean, ratio, geomean or median, per the
    aggregator); ``stats`` holds the requested statistics plus ``"n"``;
    ``confidence_interval`` is an interval dict or ``{}`` when none applies.
    """

    stats: dict
    stderr: float | None = None
    confidence_interval: dict = field(default_factory=dict)
    value: float | None = None


def _unknown(kind: str, name: str, valid: Sequence[str]) -> ValueError:
    msg = f"unknown {kind} {name!r}; valid: {', '.join(valid)}"
    close = difflib.get_close_matches(str(name), list(valid), n=1)
    return ValueError(msg + (f". Did you mean {close[0]!r}?" if close else ""))


def _reject(mask: np.ndarray, arr: np.ndarray, why: str) -> None:
    """Raise ``ValueError`` naming the first index where ``mask`` is true."""
    bad = np.flatnonzero(mask)
    if bad.size:
        i = int(bad[0])
        raise ValueError(f"value at index {i} is {float(arr[i])!r}; {why}")


def _as_array(values) -> np.ndarray:
    """Convert to a 1-D float array, rejecting non-finite entries by index."""
    if not hasattr(values, "__len__"):
        values = list(values)
    try:
        arr = np.asarray(values, dtype=float)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"values must be numeric: {exc}") from None
    if arr.ndim != 1:
        raise ValueError(f"values must be one-dimensional, got shape {arr.shape}")
    _reject(~np.isfinite(arr), arr, "values must be finite; handle inf/nan before aggregation")
    return arr


def _check_confidence(confidence: float) -> float:
    if not 0.0 < confidence < 1.0:
        raise ValueError(f"confidence must be in (0, 1), got {confidence!r}")
    return float(confidence)


def _z(confidence: float) -> float:
    """Two-sided standard-normal critical value for ``confidence``."""
    return NormalDist().inv_cdf(0.5 + 0.5 * _check_confidence(confidence))


def _check_binary(arr: np.ndarray) -> None:
    _reject((arr != 0) & (arr != 1), arr, "ratio outcomes must be 0/1 (or bool)")


def _check_positive(arr: np.ndarray) -> None:
    _reject(arr <= 0, arr, "geomean requires values > 0")


def _geomean_axis(x: np.ndarray, axis: int | None = None) -> np.ndarray:
    return np.exp(np.mean(np.log(x), axis=axis))


def mean_stats(values: Sequence[float], *, confidence: float = 0.95) -> dict:
    """Mean, sample std (ddof=1), stderr, n, min and max.

    ``std``/``stderr`` are ``None`` when n < 2; all fields but ``n`` are ``None``
    for empty input. ``confidence`` is only validated (kept for API symmetry).
    """
    _check_confidence(confidence)
    arr = _as_array(values)
    n = int(arr.size)
    if n == 0:
        return {"mean": None, "std": None, "stderr": None, "n": 0, "min": None, "max": None}
    std = float(np.std(arr, ddof=1)) if n >= 2 else None
    return {"mean": float(np.mean(arr)), "std": std,
            "stderr": std / math.sqrt(n) if std is not None else None,
            "n": n, "min": float(arr.min()), "max": float(arr.max())}


def normal_interval(mean: float, stderr: float | None, *, confidence: float = 0.95) -> dict | None:
    """Normal-approximation interval ``mean ± z * stderr``; ``None`` if stderr is None."""
    z = _z(confidence)
    if stderr is None or mean is None:
        return None
    half = z * float(stderr)
    return {"method": "normal", "level": float(confidence),
            "low": float(mean) - half, "high": float(mean) + half}


def wilson_interval(successes: int, n: int, *, confidence: float = 0.95) -> dict | None:
    """Wilson score interval (no continuity correction) for ``successes / n``.

    Matches ``scipy.stats.binomtest(k, n).proportion_ci(confidence, method="wilson")``.
    Returns ``None`` when ``n == 0``.
    """
    z = _z(confidence)
    if n < 0 or not 0 <= successes <= max(n, 0):
        raise ValueError(f"need 0 <= successes <= n, got successes={successes}, n={n}")
    if n == 0:
        return None
    p, z2 = successes / n, z * z
    denom = 1.0 + z2 / n
    center = (p + z2 / (2 * n)) / denom
    half = z * math.sqrt(p * (1 - p) / n + z2 / (4 * n * n)) / denom
    # At k == 0 (k == n) the lower (upper) bound is exactly 0 (1); avoid round-off.
    low = 0.0 if successes == 0 else max(0.0, center - half)
    high = 1.0 if successes == n else min(1.0, center + half)
    return {"method": "wilson", "level": float(confidence), "low": low, "high": high}


def ratio_stats(values: Sequence[float]) -> dict:
    """Success ratio of 0/1 (or bool) outcomes with binomial stderr ``sqrt(p(1-p)/n)``."""
    arr = _as_array(values)
    _check_binary(arr)
    n = int(arr.size)
    if n == 0:
        return {"ratio": None, "successes": 0, "n": 0, "stderr": None}
    k = int(arr.sum())
    p = k / n
    return {"ratio": p, "successes": k, "n": n, "stderr": math.sqrt(p * (1 - p) / n)}


def geomean(values) -> float | None:
    """Geometric mean; ``None`` if empty, ``ValueError`` naming the index of a value <= 0."""
    arr = _as_array(values)
    _check_positive(arr)
    return float(_geomean_axis(arr)) if arr.size else None


def percentiles(values, qs=(5, 25, 50, 75, 95)) -> dict:
    """``{"p5": ..., ...}`` using numpy's default linear interpolation (``None`` if empty)."""
    arr = _as_array(values)
    for q in qs:
        if not 0 <= q <= 100:
            raise ValueError(f"percentile {q!r} outside [0, 100]")
    return {f"p{q:g}": (float(np.percentile(arr, q)) if arr.size else None) for q in qs}


def bootstrap_interval(values, statistic: Callable = np.mean, *, n_resamples: int = 1000,
                       confidence: float = 0.95, seed: int = 0) -> dict | None:
    """Percentile bootstrap interval of ``statistic``; ``None`` for fewer than 2 values.

    Resampling uses ``numpy.random.default_rng(seed)`` and is vectorised: ``statistic``
    is called as ``statistic(samples, axis=1)`` (falling back to per-row calls if it
    does not accept ``axis``). Same inputs and seed give the same interval.
    """
    level = _check_confidence(confidence)
    if n_resamples < 1:
        raise ValueError(f"n_resamples must be >= 1, got {n_resamples}")
    arr = _as_array(values)
    n = arr.size
    if n < 2:
        return None
    rng = np.random.default_rng(seed)
    chunk = max(1, _BOOT_CHUNK // n)
    parts = []
    for start in range(0, n_resamples, chunk):
        samples = arr[rng.integers(0, n, size=(min(chunk, n_resamples - start), n))]
        try:
            stat = np.asarray(statistic(samples, axis=1), dtype=float)
        except TypeError:
            stat = np.array([statistic(row) for row in samples], dtype=float)
        parts.append(stat.reshape(-1))
    boot = np.concatenate(parts)
    alpha = 1.0 - level
    low, high = np.percentile(boot, [100 * alpha / 2, 100 * (1 - alpha / 2)])
    return {"method": "bootstrap_percentile", "level": level, "low": float(low),
            "high": float(high), "n_resamples": int(n_resamples), "seed": int(seed)}


def check_bounds(bounds) -> tuple[float | None, float | None]:
    """``(low, high)`` of a metric's valid range (None: unbounded on that side); ValueError if inverted."""
    if bounds is None:
        return None, None
    low, high = bounds
    low = None if low is None else float(low)
    high = None if high is None else float(high)
    if low is not None and high is not None and not low <= high:
        raise ValueError(f"bounds must satisfy low <= high, got [{low}, {high}]")
    return low, high


def _bound_text(value: float | None, side: str) -> str:
    return f"{value:g}" if value is not None else ("-inf" if side == "low" else "inf")


def clip_interval(interval: dict | None, bounds) -> dict | None:
    """``interval`` kept inside the metric's valid ``bounds``.

    Unchanged (the same dict) when it already lies inside. Otherwise the ends are clipped, the
    method is renamed ``"<method> (clipped to [low, high])"`` and the unclipped ends are kept
    under ``"unclipped"``, so the clip is visible wherever the interval goes.
    """
    low_b, high_b = check_bounds(bounds)
    if not interval or (low_b is None and high_b is None):
        return interval
    low, high = interval.get("low"), interval.get("high")
    if low is None or high is None:
        return interval
    new_low = max(low, low_b) if low_b is not None else low
    new_high = min(high, high_b) if high_b is not None else high
    if new_low == low and new_high == high:
        return interval
    # an interval wholly outside the range (not possible for a mean of in-range values) collapses
    new_low, new_high = min(new_low, new_high), max(new_low, new_high)
    span = f"[{_bound_text(low_b, 'low')}, {_bound_text(high_b, 'high')}]"
    return {**interval, "method": f"{interval.get('method')} (clipped to {span})", "low": float(new_low),
            "high": float(new_high), "unclipped": [float(low), float(high)]}


def _statistic(name: str, arr: np.ndarray):
    """Compute one named statistic of a non-empty array (validated name)."""
    n = arr.size
    if name in ("std", "stderr"):
        if n < 2:
            return None
        std = float(np.std(arr, ddof=1))
        return std if name == "std" else std / math.sqrt(n)
    if name == "ratio":
        _check_binary(arr)
        return float(np.mean(arr))
    if name == "geomean":
        _check_positive(arr)
        return float(_geomean_axis(arr))
    funcs = {"mean": np.mean, "min": np.min, "max": np.max, "median": np.median, "sum": np.sum}
    if name in funcs:
        return float(funcs[name](arr))
    return float(np.percentile(arr, float(_PCT_RE.fullmatch(name).group(1))))


def _validate_statistic(name: str) -> None:
    m = _PCT_RE.fullmatch(str(name))
    if m is not None and 0 <= float(m.group(1)) <= 100:
        return
    if name not in STATISTICS[:-1]:
        raise _unknown("statistic", name, STATISTICS)


def summarize(values: Sequence[float], *, aggregator: str = "mean", statistics: Sequence[str] = ("mean",),
              ci: str = "auto", confidence: float = 0.95, seed: int = 0, bounds=None) -> Summary:
    """Aggregate ``values`` into a :class:`Summary`.

    ``aggregator`` picks the headline value: ``mean`` (stderr = std/sqrt(n)),
    ``ratio`` (0/1 outcomes, binomial stderr), ``geomean`` or ``median`` (stderr None).
    ``ci="auto"`` means Wilson for ratio, normal for mean and a bootstrap of the
    aggregator statistic for median/geomean. ``"wilson"`` requires 0/1 values;
    ``"normal"`` requires a stderr (so not median/geomean). Empty input gives
    ``Summary(stats={"n": 0})`` without raising. Note: ``stats["std"]``/``["stderr"]``
    are always the sample (ddof=1) values of the data, whereas ``Summary.stderr`` is
    the headline's stderr (binomial ``sqrt(p(1-p)/n)`` for ``ratio``). ``bounds`` (low, high;
    None for an open side) is the metric's valid range: an interval leaving it is clipped and the
    clip recorded in its method (:func:`clip_interval`); Wilson and percentile-bootstrap
    intervals of in-range values never leave it.
    """
    if aggregator not in AGGREGATORS:
        raise _unknown("aggregator", aggregator, AGGREGATORS)
    if ci not in CI_METHODS:
        raise _unknown("ci method", ci, CI_METHODS)
    if isinstance(statistics, str):
        statistics = (statistics,)
    for name in statistics:
        _validate_statistic(name)
    _check_confidence(confidence)
    check_bounds(bounds)
    if ci == "auto":
        ci = {"mean": "normal", "ratio": "wilson"}.get(aggregator, "bootstrap")
    if ci == "normal" and aggregator in ("median", "geomean"):
        raise ValueError(f"ci='normal' needs a stderr, which aggregator {aggregator!r} lacks; use 'bootstrap'")

    arr = _as_array(values)
    n = int(arr.size)
    if n == 0:
        return Summary(stats={"n": 0})

    stderr = None
    if aggregator == "ratio":
        r = ratio_stats(arr)
        value, stderr = r["ratio"], r["stderr"]
    elif aggregator == "mean":
        m = mean_stats(arr)
        value, stderr = m["mean"], m["stderr"]
    else:
        value = _statistic(aggregator, arr)

    stats = {name: _statistic(name, arr) for name in statistics}
    stats["n"] = n

    interval = None
    if ci == "normal":
        interval = normal_interval(value, stderr, confidence=confidence)
    elif ci == "wilson":
        _check_binary(arr)
        interval = wilson_interval(int(arr.sum()), n, confidence=confidence)
    elif ci == "bootstrap":
        stat_fn = {"geomean": _geomean_axis, "median": np.median}.get(aggregator, np.mean)
        interval = bootstrap_interval(arr, stat_fn, confidence=confidence, seed=seed)
    interval = clip_interval(interval, bounds)
    return Summary(stats=stats, stderr=stderr, confidence_interval=interval or {}, value=value)
