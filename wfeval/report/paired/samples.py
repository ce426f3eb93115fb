"""What a paired comparison reads of two runs, as data: which samples are the same in both
(the same sample id *and* content: the request's input and, for open loop, reference hashes from
``generations.jsonl``; identical dataset hashes settle it without reading) and each metric's
per-sample values from ``metrics.jsonl`` (the last row per metric and sample wins). Two runs that
cannot be paired are refused with the reason (:class:`NotComparable`).
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable

from wfeval.report.numbers import number
from wfeval.report.runs import Entry, column_key
from wfeval.results.record import OPEN_LOOP
from wfeval.storage.rundir import FILES

SCORED = ("ok", "fail")


class NotComparable(ValueError):
    """Two runs that share no sample (or no comparable measurement); the message says why."""


@dataclass
class SampleValues:
    """One metric of one run: each scored sample's value, every sample with a row, the variant it
    was computed as; for FVD, each sample's (generated, reference) feature refs."""

    values: dict[str, float] = field(default_factory=dict)  # scored samples
    seen: set[str] = field(default_factory=set)
    variant: str | None = None
    refs: dict[str, tuple[dict | None, dict | None]] = field(default_factory=dict)  # fvd: (generated, reference)


def _status(row: dict[str, Any]) -> str:
    status = (row.get("diagnostics") or {}).get("status")
    return status if isinstance(status, str) else ("ok" if row.get("valid") else "skip")


def _value(row: dict[str, Any]) -> float | None:
    for key in ("normalized_value", "raw_value"):
        v = number(row.get(key))
        if v is not None:
            return v
    return None


def read_rows(run_dir: Path, wanted: Iterable[str], features: Iterable[str] = ()) -> dict[str, SampleValues]:
    """Per metric of ``wanted``: each sample's scored value (the last row of a sample wins), the
    samples with any row, the variant; for ``features`` metrics (FVD) the feature refs."""
    from wfeval.storage.rundir import read_jsonl

    wanted, features = set(wanted), set(features)
    out = {m: SampleValues() for m in wanted}
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


def check_pair(a: Entry, b: Entry, label_a: str, label_b: str) -> None:
    for entry, label in ((a, label_a), (b, label_b)):
        if entry.document is None:
            raise NotComparable(f"{label} has no results (run {entry.status})")
        if entry.run_dir is None or not (entry.run_dir / FILES.metrics).is_file():
            raise NotComparable(f"{label}: no metrics.jsonl in {entry.run_dir}: the per-sample values are needed")
    if column_key(a) != column_key(b):
        raise NotComparable(f"no shared samples: {label_a} ran on {column_key(a)}, {label_b} on {column_key(b)} "
                            "(a paired comparison needs the same benchmark, task and protocol)")


def shared_samples(a: Entry, b: Entry, label_a: str, label_b: str) -> tuple[set[str] | None, list[str]]:
    """The sample ids that are the same samples in both runs (None: every id of both, the dataset
    hashes being equal), and notes."""
    hash_a = a.document.benchmark.dataset_hash if a.document is not None else None
    hash_b = b.document.benchmark.dataset_hash if b.document is not None else None
    if hash_a and hash_a == hash_b:
        return None, []
    open_loop = a.protocol == OPEN_LOOP
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
