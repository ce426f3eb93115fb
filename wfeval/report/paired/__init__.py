"""Is A better than B? Two runs compared on the samples both scored, per measurement.

:func:`compare_runs` reads both run folders as data (``metrics.jsonl``: the last row per metric
and sample wins; ``generations.jsonl``: what each sample was) and pairs the samples that are the
same in both — the same sample id *and* the same content (the request's input and, for open
loop, reference hashes; identical dataset hashes settle it without reading). For every
measurement both runs have, the difference ``A − B`` of the aggregate the metric reports (mean,
ratio, median, geomean) on the paired samples comes with a paired bootstrap interval and a
permutation p-value (:mod:`wfeval.stats.paired`); FVD with the paired bootstrap of
:func:`wfeval.stats.frechet.bootstrap_values` over the shared samples (reference features
shared, both generated sets resampled with the same draws) and a bootstrap p-value. The
p-values of a comparison (or of all comparisons against one baseline) are adjusted together
(Holm); a difference is called only when the adjusted p is below ``alpha``.

Pairs that cannot be compared are refused with the reason (:class:`NotComparable`): other
benchmarks or protocols, no shared sample, samples whose content differs. A measurement that
cannot be compared (another metric version or variant, an aggregate without a paired statistic)
is listed with its reason, never given a number.

The package: :mod:`.samples` (what is read of each run: the shared samples, the per-sample
values), :mod:`.comparison` (the differences, their intervals, p-values and Holm's adjustment),
:mod:`.tables` (the comparison as text).
"""

from wfeval.report.paired.comparison import (
    ALPHA,
    FVD_RESAMPLES,
    PAIRED,
    Comparison,
    Difference,
    adjust_family,
    compare_runs,
)
from wfeval.report.paired.samples import SCORED, NotComparable, SampleValues, read_rows, sample_contents
from wfeval.report.paired.tables import comparison_table, describe

__all__ = ["compare_runs", "adjust_family", "Comparison", "Difference", "NotComparable", "ALPHA",
           "FVD_RESAMPLES", "PAIRED", "SCORED", "SampleValues", "read_rows", "sample_contents",
           "comparison_table", "describe"]
