"""Statistics of per-sample values: aggregators and confidence intervals (:mod:`.summary`), and the
Fréchet distance between feature distributions (:mod:`.frechet`, imported where FVD needs it)."""

from wfeval.stats.summary import (
    AGGREGATORS,
    CI_METHODS,
    STATISTICS,
    Summary,
    bootstrap_interval,
    check_bounds,
    clip_interval,
    geomean,
    mean_stats,
    normal_interval,
    percentiles,
    ratio_stats,
    summarize,
    wilson_interval,
)

__all__ = ["AGGREGATORS", "CI_METHODS", "STATISTICS", "Summary", "bootstrap_interval", "check_bounds",
           "clip_interval", "geomean", "mean_stats", "normal_interval", "percentiles", "ratio_stats", "summarize",
           "wilson_interval"]
