"""The statistics of a paired comparison: for every measurement both runs have, the difference
``A − B`` of the aggregate the metric reports (mean, ratio, median, geomean) on the shared samples,
with a paired bootstrap interval and a permutation p-value (:mod:`wfeval.stats.paired`); FVD with
the paired bootstrap of :func:`wfeval.stats.frechet.bootstrap_values` and a bootstrap p-value;
Holm's adjustment over a family of comparisons (:func:`adjust_family`). A measurement that cannot
be compared is listed with its reason, never given a number.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from wfeval.report.ladder import differ_only_below
from wfeval.report.paired.samples import NotComparable, SampleValues, check_pair, read_rows, shared_samples
from wfeval.report.runs import Entry
from wfeval.report.units import unit_of
from wfeval.stats import paired as paired_stats

ALPHA = 0.05
FVD_RESAMPLES = 1000
PAIRED = ("mean", "ratio", "median", "geomean")


@dataclass
class Difference:
    measurement: str
    unit: str
    higher_is_better: bool | None
    n: int
    estimate: float | None = None
    low: float | None = None
    high: float | None = None
    p: float | None = None
    p_adjusted: float | None = None
    method: str = ""
    exact: bool = False
    reason: str = ""  # why there is no number
    #: sample id -> (A's value, B's value) of the samples the difference rests on (not for FVD: a
    #: distance between sets); what a regression gate lists (:mod:`wfeval.report.paired.gate`)
    pairs: dict[str, tuple[float, float]] = field(default_factory=dict, repr=False)

    def verdict(self, alpha: float, a: str = "A", b: str = "B") -> str:
        if self.reason:
            return "not compared"
        if self.p_adjusted is None or self.p_adjusted >= alpha or not self.estimate:
            return "not significant"
        if self.higher_is_better is None:
            return f"{a} higher" if self.estimate > 0 else f"{a} lower"
        return f"{a} better" if (self.estimate > 0) == self.higher_is_better else f"{b} better"


@dataclass
class Comparison:
    a: Entry
    b: Entry
    label_a: str
    label_b: str
    shared: int
    notes: list[str] = field(default_factory=list)
    differences: list[Difference] = field(default_factory=list)
    n_resamples: int = paired_stats.N_RESAMPLES
    confidence: float = 0.95
    seed: int = 0
    family_size: int = 0  # the tests Holm adjusted together

    def to_dict(self, alpha: float = ALPHA) -> dict[str, Any]:
        return {"a": {"label": self.label_a, "run": str(self.a.run_dir)}, "b": {"label": self.label_b,
                                                                             "run": str(self.b.run_dir)},
                "shared_samples": self.shared, "notes": self.notes, "holm_family": self.family_size,
                "ladder": differ_only_below(self, alpha),
                "differences": [{**{k: v for k, v in d.__dict__.items() if k != "pairs"}, "verdict": d.verdict(alpha)}
                                for d in self.differences]}


def compare_runs(a: Entry, b: Entry, *, label_a: str = "A", label_b: str = "B",
                 n_resamples: int = paired_stats.N_RESAMPLES, confidence: float = 0.95, seed: int = 0,
                 adjust: bool = True) -> Comparison:
    """``A − B`` per measurement on the shared samples (see the module). ``adjust=False`` leaves
    the Holm adjustment to the caller (:func:`adjust_family`)."""
    check_pair(a, b, label_a, label_b)
    shared, notes = shared_samples(a, b, label_a, label_b)
    doc_a, doc_b = a.document, b.document
    assert doc_a is not None and doc_b is not None  # check_pair
    measurements = [m for m in doc_a.results if m in doc_b.results
                    and doc_a.info(m).family != "people"]  # arena: not per sample
    if not measurements:
        raise NotComparable(f"{label_a} and {label_b} have no measurement in common")
    prefix = f"{a.benchmark}."
    metric_of = {m: m[len(prefix):] if m.startswith(prefix) else m for m in measurements}
    aggregator = {m: (doc_a.results[m].diagnostics or {}).get("aggregator") for m in measurements}
    fvd = [metric_of[m] for m in measurements if aggregator[m] == "fvd"]
    rows_a = read_rows(a.run_dir, metric_of.values(), fvd)  # type: ignore[arg-type]
    rows_b = read_rows(b.run_dir, metric_of.values(), fvd)  # type: ignore[arg-type]
    ids_a = set().union(*(t.seen for t in rows_a.values()))
    ids_b = set().union(*(t.seen for t in rows_b.values()))
    usable = (ids_a & ids_b) if shared is None else (shared & ids_a & ids_b)
    if not usable:
        raise NotComparable(f"no shared samples: {label_a} scored {len(ids_a)} samples, {label_b} {len(ids_b)}, "
                            "none of them the same sample")
    comparison = Comparison(a, b, label_a, label_b, len(usable), notes, n_resamples=n_resamples,
                            confidence=confidence, seed=seed)
    for m in measurements:
        metric = metric_of[m]
        info_a, info_b = doc_a.info(m), doc_b.info(m)
        diff = Difference(m, unit_of(doc_a, m), info_a.higher_is_better, 0)
        comparison.differences.append(diff)
        if str(info_a.version) != str(info_b.version):
            diff.reason = f"metric versions differ ({info_a.version} vs {info_b.version})"
            continue
        ta, tb = rows_a[metric], rows_b[metric]
        other = (doc_b.results[m].diagnostics or {}).get("aggregator")
        if other != aggregator[m]:
            diff.reason = f"aggregated differently ({aggregator[m]} vs {other})"
            continue
        if ta.variant and tb.variant and ta.variant != tb.variant:
            diff.reason = f"computed differently: {ta.variant} vs {tb.variant}"
            continue
        if aggregator[m] == "fvd":
            _fvd(diff, ta, tb, usable, doc_a.results[m], n_resamples, confidence, seed)
            continue
        if aggregator[m] not in PAIRED:
            diff.reason = f"aggregated as {aggregator[m] or 'its own way'}: no paired statistic for it"
            continue
        ids = sorted(usable & ta.values.keys() & tb.values.keys())
        diff.n = len(ids)
        if not ids:
            diff.reason = "no sample scored by both"
            continue
        try:
            result = paired_stats.paired_difference([ta.values[s] for s in ids], [tb.values[s] for s in ids],
                                                    statistic=aggregator[m], n_resamples=n_resamples,
                                                    confidence=confidence, seed=seed)
        except ValueError as exc:
            diff.reason = str(exc)
            continue
        diff.estimate, diff.low, diff.high, diff.p = result.estimate, result.low, result.high, result.p_value
        diff.pairs = {s: (ta.values[s], tb.values[s]) for s in ids}
        diff.exact = result.exact
        diff.method = (f"{aggregator[m]} difference, paired bootstrap; permutation p "
                       f"({'exact' if result.exact else f'{n_resamples} swaps'})")
    if adjust:
        adjust_family([comparison])
    return comparison


def _fvd(diff: Difference, ta: SampleValues, tb: SampleValues, usable: set[str], agg: dict[str, Any], n_resamples: int,
         confidence: float, seed: int) -> None:
    """FVD of both generated sets against the shared reference features, on the same samples."""
    from wfeval.api import ArtifactRef
    from wfeval.stats.frechet import bootstrap_values, frechet_terms
    from wfeval.stats.paired import bootstrap_p
    from wfeval.storage.artifacts import ArtifactError, read_array

    ids = []
    for s in sorted(usable & ta.refs.keys() & tb.refs.keys()):
        (gen_a, ref_a), (gen_b, ref_b) = ta.refs[s], tb.refs[s]
        if gen_a and gen_b and ref_a and ref_b and ref_a.get("sha256") == ref_b.get("sha256"):
            ids.append(s)
    diff.n = len(ids)
    if len(ids) < 2:
        diff.reason = f"FVD needs at least 2 samples with features in both runs, {len(ids)} have"
        return
    covariance = ((agg.diagnostics or {}).get("recipe") or {}).get("covariance", "N")
    try:
        def load(refs):
            return np.stack([read_array(ArtifactRef.from_dict(r), verify=True).astype(np.float64).reshape(-1)
                             for r in refs])

        real = load([ta.refs[s][1] for s in ids])
        gen_a, gen_b = load([ta.refs[s][0] for s in ids]), load([tb.refs[s][0] for s in ids])
    except (ArtifactError, ValueError, KeyError, TypeError) as exc:
        diff.reason = f"features unreadable: {exc}"
        return
    resamples = min(n_resamples, FVD_RESAMPLES)
    diff.estimate = frechet_terms(real, gen_a, covariance)["value"] - frechet_terms(real, gen_b, covariance)["value"]
    units = np.arange(len(ids))
    boot = (bootstrap_values(real, gen_a, covariance=covariance, n_resamples=resamples, seed=seed, units1=units,
                             units2=units)
            - bootstrap_values(real, gen_b, covariance=covariance, n_resamples=resamples, seed=seed, units1=units,
                               units2=units))
    alpha = 1 - confidence
    diff.low, diff.high = (float(v) for v in np.percentile(boot, [100 * alpha / 2, 100 * (1 - alpha / 2)]))
    diff.p = bootstrap_p(boot)
    diff.method = f"FVD difference on shared references, paired bootstrap ({resamples}); bootstrap p"


def adjust_family(comparisons: Sequence[Comparison]) -> None:
    """Holm-adjust every p-value of ``comparisons`` together (one family)."""
    tests = [d for c in comparisons for d in c.differences if d.p is not None]
    for d, p in zip(tests, paired_stats.holm([d.p for d in tests])):  # type: ignore[misc]
        d.p_adjusted = p
    for c in comparisons:
        c.family_size = len(tests)
