import json
import math

import numpy as np
import pytest
import scipy.stats

from wfeval.stats import (
    Summary,
    bootstrap_interval,
    geomean,
    mean_stats,
    normal_interval,
    percentiles,
    ratio_stats,
    summarize,
    wilson_interval,
)


def _assert_plain(obj):
    """Recursively check that a result holds only plain, finite JSON types."""
    if isinstance(obj, dict):
        for v in obj.values():
            _assert_plain(v)
    elif obj is not None and not isinstance(obj, str):
        assert type(obj) in (int, float), f"{obj!r} is {type(obj)}"
        assert math.isfinite(obj)


# --- wilson -----------------------------------------------------------------

@pytest.mark.parametrize("k,n", [(0, 10), (10, 10), (3, 10), (1, 1), (0, 1), (47, 100), (999, 1000), (5, 7)])
@pytest.mark.parametrize("conf", [0.9, 0.95, 0.99])
def test_wilson_matches_scipy_binomtest(k, n, conf):
    ref = scipy.stats.binomtest(k, n).proportion_ci(confidence_level=conf, method="wilson")
    got = wilson_interval(k, n, confidence=conf)
    assert got["method"] == "wilson" and got["level"] == conf
    assert got["low"] == pytest.approx(ref.low, abs=1e-12)
    assert got["high"] == pytest.approx(ref.high, abs=1e-12)
    _assert_plain(got)


def test_wilson_edges_and_invalid():
    assert wilson_interval(0, 0) is None
    assert wilson_interval(0, 5)["low"] == 0.0
    assert wilson_interval(5, 5)["high"] == 1.0
    with pytest.raises(ValueError, match="successes"):
        wilson_interval(6, 5)
    with pytest.raises(ValueError, match="confidence"):
        wilson_interval(1, 5, confidence=1.5)


# --- normal / mean ----------------------------------------------------------

@pytest.mark.parametrize("conf", [0.8, 0.95, 0.99])
def test_normal_interval_is_mean_plus_minus_z_stderr(conf):
    z = scipy.stats.norm.ppf(0.5 + conf / 2)
    got = normal_interval(2.5, 0.4, confidence=conf)
    assert got["method"] == "normal" and got["level"] == conf
    assert got["low"] == pytest.approx(2.5 - z * 0.4, abs=1e-12)
    assert got["high"] == pytest.approx(2.5 + z * 0.4, abs=1e-12)
    assert normal_interval(2.5, None) is None


def test_mean_stats_values():
    vals = [1.0, 2.0, 4.0, 9.0]
    got = mean_stats(vals)
    assert got["mean"] == pytest.approx(4.0)
    assert got["std"] == pytest.approx(np.std(vals, ddof=1))
    assert got["stderr"] == pytest.approx(np.std(vals, ddof=1) / 2)
    assert (got["n"], got["min"], got["max"]) == (4, 1.0, 9.0)
    _assert_plain(got)
    one = mean_stats([3.0])
    assert one["std"] is None and one["stderr"] is None and one["mean"] == 3.0
    assert mean_stats([])["n"] == 0 and mean_stats([])["mean"] is None


def test_non_finite_input_names_index():
    with pytest.raises(ValueError, match="index 2"):
        mean_stats([1.0, 2.0, float("inf")])
    with pytest.raises(ValueError, match="index 1"):
        summarize([1.0, float("nan")])
    with pytest.raises(ValueError, match="one-dimensional"):
        mean_stats([[1.0, 2.0]])


# --- ratio ------------------------------------------------------------------

def test_ratio_stats_values_and_bools():
    got = ratio_stats([True, False, True, True])
    assert got == {"ratio": 0.75, "successes": 3, "n": 4, "stderr": pytest.approx(math.sqrt(0.75 * 0.25 / 4))}
    _assert_plain(got)
    assert ratio_stats([])["ratio"] is None


def test_ratio_stats_rejects_non_binary_with_index():
    with pytest.raises(ValueError, match="index 2.*0/1"):
        ratio_stats([1, 0, 0.5, 1])


# --- geomean / percentiles --------------------------------------------------

def test_geomean_matches_scipy_gmean():
    vals = np.random.default_rng(1).lognormal(size=50)
    assert geomean(vals) == pytest.approx(scipy.stats.gmean(vals), rel=1e-12)
    assert type(geomean(vals)) is float
    assert geomean([]) is None


def test_geomean_rejects_non_positive_with_index():
    with pytest.raises(ValueError, match="index 1"):
        geomean([1.0, 0.0, 2.0])
    with pytest.raises(ValueError, match="index 0"):
        geomean([-1.0])


def test_percentiles_match_numpy():
    vals = np.random.default_rng(2).normal(size=37)
    got = percentiles(vals)
    assert list(got) == ["p5", "p25", "p50", "p75", "p95"]
    for q in (5, 25, 50, 75, 95):
        assert got[f"p{q}"] == pytest.approx(float(np.percentile(vals, q)), abs=1e-12)
    assert percentiles([1, 2, 3, 4], qs=(0, 100, 2.5)) == {"p0": 1.0, "p100": 4.0, "p2.5": pytest.approx(1.075)}
    with pytest.raises(ValueError, match="101"):
        percentiles([1.0], qs=(101,))


# --- bootstrap --------------------------------------------------------------

def test_bootstrap_is_deterministic_by_seed():
    vals = np.random.default_rng(3).normal(size=50)
    a = bootstrap_interval(vals, seed=7)
    assert a == bootstrap_interval(vals, seed=7)
    assert a != bootstrap_interval(vals, seed=8)
    assert a["method"] == "bootstrap_percentile" and a["n_resamples"] == 1000 and a["seed"] == 7
    _assert_plain(a)
    assert bootstrap_interval([1.0]) is None and bootstrap_interval([]) is None


def test_bootstrap_close_to_scipy_percentile_bootstrap():
    vals = np.random.default_rng(4).normal(loc=1.0, scale=1.0, size=200)
    got = bootstrap_interval(vals, n_resamples=5000, seed=0)
    ref = scipy.stats.bootstrap((vals,), np.mean, method="percentile", n_resamples=5000,
                                random_state=np.random.default_rng(0)).confidence_interval
    assert got["low"] == pytest.approx(ref.low, abs=0.05)
    assert got["high"] == pytest.approx(ref.high, abs=0.05)
    assert got["low"] < float(np.mean(vals)) < got["high"]


def test_bootstrap_statistic_without_axis_falls_back():
    vals = np.arange(1.0, 21.0)
    got = bootstrap_interval(vals, lambda x: float(np.median(x)), n_resamples=200)
    vec = bootstrap_interval(vals, np.median, n_resamples=200)
    assert got["low"] == pytest.approx(vec["low"]) and got["high"] == pytest.approx(vec["high"])


# --- summarize --------------------------------------------------------------

def test_summarize_mean_uses_normal_interval():
    vals = [1.0, 2.0, 3.0, 4.0, 10.0]
    s = summarize(vals, statistics=("mean", "std", "min", "max", "sum", "median", "p90"))
    assert isinstance(s, Summary)
    assert s.value == pytest.approx(4.0)
    assert s.stderr == pytest.approx(np.std(vals, ddof=1) / math.sqrt(5))
    assert s.stats == {"mean": pytest.approx(4.0), "std": pytest.approx(np.std(vals, ddof=1)), "min": 1.0,
                       "max": 10.0, "sum": 20.0, "median": 3.0, "p90": pytest.approx(np.percentile(vals, 90)),
                       "n": 5}
    z = scipy.stats.norm.ppf(0.975)
    assert s.confidence_interval["method"] == "normal"
    assert s.confidence_interval["low"] == pytest.approx(4.0 - z * s.stderr)
    json.dumps(s.stats), json.dumps(s.confidence_interval)


def test_summarize_ratio_uses_wilson():
    s = summarize([1, 0, 1, 1, 0, 1, 1, 1], aggregator="ratio", statistics=("ratio", "mean"))
    assert s.value == 0.75 and s.stats == {"ratio": 0.75, "mean": 0.75, "n": 8}
    assert s.stderr == pytest.approx(math.sqrt(0.75 * 0.25 / 8))
    ref = scipy.stats.binomtest(6, 8).proportion_ci(method="wilson")
    assert s.confidence_interval["method"] == "wilson"
    assert s.confidence_interval["low"] == pytest.approx(ref.low, abs=1e-12)
    with pytest.raises(ValueError, match="index 1"):
        summarize([1, 2], aggregator="ratio")


def test_summarize_geomean_and_median_use_bootstrap():
    vals = np.random.default_rng(5).lognormal(size=100)
    g = summarize(vals, aggregator="geomean", statistics=("geomean",), seed=3)
    assert g.value == pytest.approx(scipy.stats.gmean(vals)) and g.stats["geomean"] == g.value
    assert g.stderr is None
    assert g.confidence_interval["method"] == "bootstrap_percentile" and g.confidence_interval["seed"] == 3
    assert g.confidence_interval["low"] < g.value < g.confidence_interval["high"]
    m = summarize(vals, aggregator="median", statistics=())
    assert m.value == pytest.approx(float(np.median(vals))) and m.stats == {"n": 100}
    assert m.confidence_interval["low"] <= m.value <= m.confidence_interval["high"]
    assert m.confidence_interval == summarize(vals, aggregator="median").confidence_interval


def test_summarize_explicit_ci_choices():
    vals = [0, 1, 1, 0, 1]
    assert summarize(vals, ci="none").confidence_interval == {}
    assert summarize(vals, ci="wilson").confidence_interval["method"] == "wilson"
    assert summarize(vals, ci="bootstrap").confidence_interval["method"] == "bootstrap_percentile"
    assert summarize(vals, aggregator="ratio", ci="normal").confidence_interval["method"] == "normal"
    assert summarize([2.0], ci="normal").confidence_interval == {}  # n=1: no stderr
    with pytest.raises(ValueError, match="index 0"):
        summarize([0.5, 1.0], ci="wilson")
    with pytest.raises(ValueError, match="bootstrap"):
        summarize([1.0, 2.0], aggregator="median", ci="normal")


def test_summarize_empty_input():
    for agg in ("mean", "ratio", "geomean", "median"):
        s = summarize([], aggregator=agg, statistics=("mean", "std", "p50"))
        assert s == Summary(stats={"n": 0}, stderr=None, confidence_interval={}, value=None)


def test_summarize_invalid_names():
    with pytest.raises(ValueError, match=r"mean, ratio, geomean, median.*Did you mean 'median'"):
        summarize([1.0], aggregator="medain")
    with pytest.raises(ValueError, match="'stdev'"):
        summarize([1.0], statistics=("stdev",))
    with pytest.raises(ValueError, match="'p101'"):
        summarize([1.0], statistics=("p101",))
    with pytest.raises(ValueError, match="Did you mean 'wilson'"):
        summarize([1.0], ci="wilsn")
    with pytest.raises(ValueError, match="confidence"):
        summarize([1.0], confidence=0.0)


def test_summary_is_frozen():
    s = summarize([1.0, 2.0])
    with pytest.raises(AttributeError):
        s.value = 3.0
