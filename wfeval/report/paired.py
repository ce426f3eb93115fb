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
"""

from __future__ import annotations

import hashlib
import json
import math
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from wfeval.report.numbers import HYPHEN, fmt, p_value, signed
from wfeval.report.runs import Entry, column_key
from wfeval.report.units import unit_of, with_unit
from wfeval.stats import paired as paired_stats
from wfeval.storage.rundir import FILES

ALPHA = 0.05
FVD_RESAMPLES = 1000
SCORED = ("ok", "fail")
PAIRED = ("mean", "ratio", "median", "geomean")


class NotComparable(ValueError):
    """Two runs that share no sample (or no comparable measurement); the message says why."""


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
                "differences": [{**{k: v for k, v in d.__dict__.items()}, "verdict": d.verdict(alpha)}
                                for d in self.differences]}


# -- reading a run ------------------------------------------------------------------------------

@dataclass
class _Metric:
    values: dict[str, float] = field(default_factory=dict)  # scored samples
    seen: set[str] = field(default_factory=set)
    variant: str | None = None
    refs: dict[str, tuple[dict | None, dict | None]] = field(default_factory=dict)  # fvd: (generated, reference)


def _status(row: dict[str, Any]) -> str:
    status = (row.get("diagnostics") or {}).get("status")
    return status if isinstance(status, str) else ("ok" if row.get("valid") else "skip")


def _value(row: dict[str, Any]) -> float | None:
    for key in ("normalized_value", "raw_value"):
        v = row.get(key)
        if isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v):
            return float(v)
    return None


def read_rows(run_dir: Path, wanted: Iterable[str], features: Iterable[str] = ()) -> dict[str, _Metric]:
    """Per metric of ``wanted``: each sample's scored value (the last row of a sample wins), the
    samples with any row, the variant; for ``features`` metrics (FVD) the feature refs."""
    from wfeval.storage.rundir import read_jsonl

    wanted, features = set(wanted), set(features)
    out = {m: _Metric() for m in wanted}
    for row in read_jsonl(run_dir / FILES.metrics):
        metric, sample = row.get("metric_id"), row.get("sample_id")
        if metric not in wanted or not isinstance(sample, str):
            continue
        table = out[metric]
        table.seen.add(sample)
        status, value = _status(row), _value(row)
        variant = (row.get("diagnostics") or {}).get("variant")
        if isinstance(variant, str) and table.variant is None:
            table.variant = variant
        if metric in features:
            refs = row.get("artifact_refs") or {}
            table.refs[sample] = (refs.get("generated_features") if status == "ok" else None,
                                  refs.get("reference_features"))
            continue
        if status in SCORED and value is not None:
            table.values[sample] = value
        else:
            table.values.pop(sample, None)
    return out


def sample_contents(run_dir: Path, references: bool) -> dict[str, str]:
    """Sample id → a digest of what the sample is (input hashes, controls, and with ``references``
    the reference hashes) from ``generations.jsonl`` (the last record of a sample wins)."""
    from wfeval.storage.rundir import read_jsonl, request_sample_id

    out: dict[str, str] = {}
    for record in read_jsonl(run_dir / FILES.generations):
        sample = request_sample_id(record)
        request = record.get("request") if isinstance(record, dict) else None
        if not isinstance(sample, str) or not isinstance(request, dict):
            continue
        what = {"inputs": {k: (v or {}).get("sha256") for k, v in (request.get("inputs") or {}).items()
                           if isinstance(v, dict)},
                "split": request.get("split"), "prompt": request.get("prompt")}
        if references:
            what["references"] = {k: (v or {}).get("sha256") for k, v in (request.get("references") or {}).items()
                                  if isinstance(v, dict)}
            what["controls"] = request.get("controls")
        out[sample] = hashlib.sha256(json.dumps(what, sort_keys=True, default=str).encode()).hexdigest()
    return out


# -- comparing ----------------------------------------------------------------------------------

def _check_pair(a: Entry, b: Entry, label_a: str, label_b: str) -> None:
    for entry, label in ((a, label_a), (b, label_b)):
        if entry.document is None:
            raise NotComparable(f"{label} has no results (run {entry.status})")
        if entry.run_dir is None or not (entry.run_dir / FILES.metrics).is_file():
            raise NotComparable(f"{label}: no metrics.jsonl in {entry.run_dir}: the per-sample values are needed")
    if column_key(a) != column_key(b):
        raise NotComparable(f"no shared samples: {label_a} ran on {column_key(a)}, {label_b} on {column_key(b)} "
                            "(a paired comparison needs the same benchmark, task and protocol)")


def _shared_samples(a: Entry, b: Entry, label_a: str, label_b: str) -> tuple[set[str] | None, list[str]]:
    """The sample ids that are the same samples in both runs (None: every id of both, the dataset
    hashes being equal), and notes."""
    hash_a = ((a.document or {}).get("benchmark") or {}).get("dataset_hash")
    hash_b = ((b.document or {}).get("benchmark") or {}).get("dataset_hash")
    if hash_a and hash_a == hash_b:
        return None, []
    open_loop = a.protocol == "open_loop"
    content_a = sample_contents(a.run_dir, open_loop)  # type: ignore[arg-type]
    content_b = sample_contents(b.run_dir, open_loop)  # type: ignore[arg-type]
    if not content_a or not content_b:
        raise NotComparable("no generations.jsonl to tell whether the samples are the same (the dataset hashes "
                            "differ): nothing compared")
    common = content_a.keys() & content_b.keys()
    same = {s for s in common if content_a[s] == content_b[s]}
    if not same:
        why = (f"{len(common)} sample ids in common, but their content differs (another seed, split, version "
               "or data)" if common else "no sample id in common")
        raise NotComparable(f"no shared samples between {label_a} ({len(content_a)} samples) and {label_b} "
                            f"({len(content_b)}): {why}")
    notes = []
    if len(same) < len(common):
        notes.append(f"{len(common) - len(same)} sample ids in both runs hold other content: left out")
    only_a, only_b = len(content_a) - len(common), len(content_b) - len(common)
    if only_a or only_b:
        notes.append(f"{len(same)} shared samples ({only_a} only in {label_a}, {only_b} only in {label_b})")
    return same, notes


def compare_runs(a: Entry, b: Entry, *, label_a: str = "A", label_b: str = "B",
                 n_resamples: int = paired_stats.N_RESAMPLES, confidence: float = 0.95, seed: int = 0,
                 adjust: bool = True) -> Comparison:
    """``A − B`` per measurement on the shared samples (see the module). ``adjust=False`` leaves
    the Holm adjustment to the caller (:func:`adjust_family`)."""
    _check_pair(a, b, label_a, label_b)
    shared, notes = _shared_samples(a, b, label_a, label_b)
    doc_a, doc_b = a.document or {}, b.document or {}
    measurements = [m for m in doc_a.get("results") or {} if m in (doc_b.get("results") or {})]
    if not measurements:
        raise NotComparable(f"{label_a} and {label_b} have no measurement in common")
    prefix = f"{a.benchmark}."
    metric_of = {m: m[len(prefix):] if m.startswith(prefix) else m for m in measurements}
    aggregator = {m: ((doc_a["results"][m].get("diagnostics") or {}).get("aggregator")) for m in measurements}
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
        info_a, info_b = (doc_a.get("metrics") or {}).get(m) or {}, (doc_b.get("metrics") or {}).get(m) or {}
        diff = Difference(m, unit_of(doc_a, m), info_a.get("higher_is_better"), 0)
        comparison.differences.append(diff)
        if str(info_a.get("version")) != str(info_b.get("version")):
            diff.reason = f"metric versions differ ({info_a.get('version')} vs {info_b.get('version')})"
            continue
        ta, tb = rows_a[metric], rows_b[metric]
        other = (doc_b["results"][m].get("diagnostics") or {}).get("aggregator")
        if other != aggregator[m]:
            diff.reason = f"aggregated differently ({aggregator[m]} vs {other})"
            continue
        if ta.variant and tb.variant and ta.variant != tb.variant:
            diff.reason = f"computed differently: {ta.variant} vs {tb.variant}"
            continue
        if aggregator[m] == "fvd":
            _fvd(diff, ta, tb, usable, doc_a["results"][m], n_resamples, confidence, seed)
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
        diff.exact = result.exact
        diff.method = (f"{aggregator[m]} difference, paired bootstrap; permutation p "
                       f"({'exact' if result.exact else f'{n_resamples} swaps'})")
    if adjust:
        adjust_family([comparison])
    return comparison


def _fvd(diff: Difference, ta: _Metric, tb: _Metric, usable: set[str], agg: dict[str, Any], n_resamples: int,
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
    covariance = ((agg.get("diagnostics") or {}).get("recipe") or {}).get("covariance", "N")
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


# -- rendering ----------------------------------------------------------------------------------

def comparison_table(comparison: Comparison, alpha: float = ALPHA) -> tuple[list[str], list[list[str]]]:
    header = ["measurement", "A − B", f"{comparison.confidence:.0%} CI", "p", "p (Holm)", "n", "verdict"]
    body = []
    prefix = f"{comparison.a.benchmark}."
    for d in comparison.differences:
        name = d.measurement[len(prefix):] if d.measurement.startswith(prefix) else d.measurement
        if d.reason:
            body.append([name, HYPHEN, HYPHEN, HYPHEN, HYPHEN, str(d.n or HYPHEN), f"not compared: {d.reason}"])
            continue
        body.append([name, with_unit(signed(d.estimate), d.unit), f"[{fmt(d.low)}, {fmt(d.high)}]",
                     p_value(d.p), p_value(d.p_adjusted), str(d.n), d.verdict(alpha, comparison.label_a, comparison.label_b)])
    return header, body


def describe(comparison: Comparison, alpha: float = ALPHA) -> list[str]:
    """The lines above and below the table: who is A and B, the samples, the methods, the correction."""
    c = comparison
    lines = [f"paired comparison on {column_key(c.a)}: A = {c.label_a}, B = {c.label_b}",
             f"{c.shared} shared samples (same id and content); A − B of each measurement's aggregate on the "
             "samples both scored", *c.notes]
    small = [d for d in c.differences if d.exact and d.n and 2.0 / 2 ** d.n * max(c.family_size, 1) >= alpha]
    tail = [f"interval: paired bootstrap ({c.n_resamples} resamples of the shared samples, seed {c.seed}); p: "
            "two-sided permutation test (values swapped within samples; exact when 2^n <= resamples); FVD: paired "
            "bootstrap of both distances on the same draws, p from it",
            f"multiple comparisons: Holm–Bonferroni over {c.family_size} tests; a difference is called when the "
            f"Holm-adjusted p < {alpha:g}"]
    if small:
        n = min(d.n for d in small)
        tail.append(f"with {n} samples the smallest possible p is {2 / 2 ** n:.3g} ({2 / 2 ** n * c.family_size:.3g} "
                    "after Holm): too few samples to call any difference; evaluate more samples")
    return lines + ["TABLE"] + tail
