"""From metric rows to results: aggregation, group slices, scorecard, evidence, results.json.

Everything that turns per-sample :class:`~wfeval.api.MetricResult` rows into aggregates lives
here, and every path that produces results (a run, ``run.from_run``, replay, merge, resume)
calls :func:`build_results`.
"""

from wfeval.results.aggregation import (
    Aggregation,
    MetricSet,
    aggregate_metric,
    declared_aggregation,
    headline,
    resolve_aggregation,
)
from wfeval.results.document import RULE_KEYS, build_results, dataset_hash

__all__ = ["Aggregation", "MetricSet", "RULE_KEYS", "aggregate_metric", "build_results", "dataset_hash", "declared_aggregation",
           "headline", "resolve_aggregation"]
