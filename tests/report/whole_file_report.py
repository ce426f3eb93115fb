"""The test oracle: the report's per-run sections as they were computed from whole run files.

This is main's code before the report streamed (issue 16): every row of ``samples.jsonl``,
``metrics.jsonl`` (the last row per metric and sample wins), ``generations.jsonl`` and
``steps.jsonl`` held in dicts and lists, and the sections' data computed from them. It is kept
here only to check that the streaming report renders the same page; it follows the page's
changes in what it shows (issue 27: the data of a benchmark's section, drawn by the page; PSNR's
capped values counted per frame; latency in milliseconds), never in how it reads the files.
"""

from __future__ import annotations

import math
from collections import defaultdict
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from wfeval.report.html import charts
from wfeval.report.html.load import RunData as StreamedRun
from wfeval.report.html.load import read_jsonl
from wfeval.report.html.samples import MAX_GROUPS, MAX_IDS, MAX_SAMPLE_ROWS, _actions
from wfeval.report.html.values import fmt, higher_is_better, number, row_value

CURVE_KEYS = (
    ("per_frame", lambda c, i: int(c.get("first_frame") or 0) + i, "frame"),
    ("per_step", lambda c, i: i + 1, "frame (change from the previous one)"),
    ("per_frame_error_px", lambda c, i: i, "frame"),
)


@dataclass
class WholeRun:
    streamed: StreamedRun  # for what both read the same way: path, label, manifest, store, refs
    samples: list[dict[str, Any]] = field(default_factory=list)
    metric_rows: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)
    generations: dict[str, dict[str, Any]] = field(default_factory=dict)
    steps: list[dict[str, Any]] = field(default_factory=list)

    def __getattr__(self, name):
        return getattr(self.streamed, name)


def load_whole(run: StreamedRun) -> WholeRun:
    path = Path(run.path)
    whole = WholeRun(run)
    whole.samples = list(read_jsonl(path / "samples.jsonl"))
    for row in read_jsonl(path / "metrics.jsonl"):  # the last row per metric and sample wins
        metric, sample = row.get("metric_id"), row.get("sample_id")
        if metric and sample:
            whole.metric_rows.setdefault(str(metric), {})[str(sample)] = row
    for row in read_jsonl(path / "generations.jsonl"):
        sample = ((row.get("request") or {}).get("sample_id"))
        if sample:
            whole.generations[str(sample)] = row
    whole.steps = list(read_jsonl(path / "steps.jsonl"))
    return whole


def ok_rows(run, metric):
    return [row for row in run.metric_rows.get(metric, {}).values()
            if (row.get("diagnostics") or {}).get("status", "ok" if row.get("valid") else "skip") in ("ok", "fail")]


def horizon_curves(runs):
    metrics: list[str] = []
    for run in runs:
        metrics += [m for m in run.metric_rows if m not in metrics]
    found: dict[tuple, dict[str, Any]] = {}
    for metric in metrics:
        curves, xlabel, component, cap = [], "frame", "", None
        for run in runs:
            by_x: dict[int, list[float]] = defaultdict(list)
            for row in ok_rows(run, metric):
                components = row.get("components") or {}
                if number(components.get("max_db")) is not None:
                    cap = float(components["max_db"])
                for key, x_of, meaning in CURVE_KEYS:
                    series = components.get(key)
                    if isinstance(series, list) and series:
                        xlabel, component = meaning, key
                        for j, v in enumerate(series):
                            if number(v) is not None:
                                by_x[x_of(components, j)].append(float(v))
                        break
            if not by_x:
                continue
            xs = sorted(by_x)
            mean = [sum(by_x[x]) / len(by_x[x]) for x in xs]
            half = [1.96 * _std(by_x[x]) / math.sqrt(len(by_x[x])) if len(by_x[x]) > 1 else 0.0 for x in xs]
            capped = [sum(1 for v in by_x[x] if cap is not None and v >= cap) for x in xs]
            curves.append(charts.Curve(run.label, xs, mean, [m - h for m, h in zip(mean, half)],
                                       [m + h for m, h in zip(mean, half)], run.color, capped))
        if curves:
            key = (component, tuple((c.label, tuple(c.x), tuple(c.y)) for c in curves))
            found.setdefault(key, {"metrics": [], "component": component, "xlabel": xlabel, "curves": curves,
                                   "cap": cap})
            found[key]["metrics"].append(metric)
    return list(found.values())


def _std(values):
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def _quantile(values, q):
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def latency_data(runs):
    per_run = []
    for run in runs:
        by_step: dict[int, list[float]] = defaultdict(list)
        rows = run.steps
        if any(row.get("phase") == "step" for row in rows):
            rows = [row for row in rows if row.get("phase") == "step"]
        for row in rows:
            step, latency = row.get("step"), number(row.get("latency_seconds"))
            if isinstance(step, int) and not isinstance(step, bool) and latency is not None and not row.get("cached"):
                by_step[step].append(latency)
        if len(by_step) > 1:
            per_run.append((run, by_step))
    if not per_run:
        return None
    curves, table = [], []
    for run, by_step in per_run:
        xs = sorted(by_step)
        curves.append(charts.Curve(run.label, xs, [1000 * _quantile(by_step[x], 0.5) for x in xs],
                                   [1000 * _quantile(by_step[x], 0.1) for x in xs],
                                   [1000 * _quantile(by_step[x], 0.9) for x in xs], run.color))
        every = [v for x in xs for v in by_step[x]]
        median = _quantile(every, 0.5)
        table.append({"label": run.label, "steps": len(xs), "rows": len(every), "median": fmt(1000 * median),
                      "p90": fmt(1000 * _quantile(every, 0.9)), "rate": fmt(1 / median if median > 0 else None)})
    return {"curves": curves, "table": table}


def sample_values(run, sample_id):
    out = []
    for metric, rows in run.metric_rows.items():
        row = rows.get(sample_id)
        if row is None:
            continue
        status = (row.get("diagnostics") or {}).get("status", "")
        value = row_value(row)
        out.append((metric, fmt(value) if status in ("ok", "fail") and value is not None else status or "–"))
    return out


def strips(runs, measurements):
    from wfeval.report.html.media import sample_strip

    cache: dict[tuple[str, str], Any] = {}
    out = []
    for m in measurements:
        metric = m.split(".", 1)[1] if "." in m else m
        higher = higher_is_better(runs, m)
        groups = []
        for run in runs:
            if not m.startswith(f"{run.benchmark_id}."):
                continue
            scored = [(v, r["sample_id"]) for r in ok_rows(run, metric) if (v := row_value(r)) is not None]
            if not scored:
                continue
            scored.sort(key=lambda t: (-t[0] if higher is not False else t[0], t[1]))
            names = ("best", "median", "worst") if higher is not None else ("highest", "median", "lowest")
            picks = list(zip(names, (scored[0], scored[len(scored) // 2], scored[-1])))
            if scored[0][0] == scored[-1][0]:
                picks = [(f"all {len(scored)} equal", scored[0])]
            items = []
            for rank, (value, sample_id) in picks:
                record = run.generations.get(sample_id)
                key = (str(run.path), sample_id)
                if key not in cache:
                    cache[key] = (sample_strip(record["request"], record["result"], run.ref, run.store_dir())
                                  if record else None)
                strip = cache[key]
                items.append({
                    "rank": rank, "sample_id": sample_id, "value": fmt(value), "strip": strip,
                    "problems": strip.problems if strip else ["no generation recorded for this sample"],
                    "scores": sample_values(run, sample_id),
                    "actions": _actions(record["request"]) if record else "",
                })
            groups.append({"label": run.label, "n": len(scored), "picks": items})
        out.append({"measurement": m, "groups": groups,
                    "note": "" if groups else "no per-sample values (e.g. a distribution metric such as FVD)"})
    return out


def failures(run):
    groups: dict[tuple[str, str, str], list[str]] = defaultdict(list)
    if run.samples:
        for row in run.samples:
            if not row.get("success", True):
                reason = ((row.get("metadata") or {}).get("generation_error") or row.get("stop_reason") or "")
                groups[("generation", row.get("stop_reason") or "failed", str(reason))].append(row["sample_id"])
    else:
        for sample_id, record in run.generations.items():
            result = record.get("result") or {}
            if result.get("status", "ok") != "ok":
                groups[("generation", result.get("stop_reason") or result["status"], str(result.get("error") or ""))
                       ].append(sample_id)
    for metric, rows in run.metric_rows.items():
        for sample_id, row in rows.items():
            status = (row.get("diagnostics") or {}).get("status", "ok" if row.get("valid") else "skip")
            if status in ("skip", "error"):
                groups[(metric, status, str(row.get("skip_reason") or ""))].append(sample_id)
    items = [{"where": where, "status": status, "reason": reason, "count": len(ids),
              "ids": sorted(ids)[:MAX_IDS], "more": max(0, len(ids) - MAX_IDS)}
             for (where, status, reason), ids in sorted(
                 groups.items(), key=lambda kv: (kv[0][0] != "generation", -len(kv[1]), kv[0]))]
    hidden = items[MAX_GROUPS:]
    return {"label": run.label, "reasons": items[:MAX_GROUPS], "total": sum(i["count"] for i in items),
            "hidden_groups": len(hidden), "hidden_items": sum(i["count"] for i in hidden),
            "run_status": run.status, "run_error": run.manifest.error}


def sample_table(run):
    metrics = list(run.metric_rows)
    ids = [row["sample_id"] for row in run.samples] or list(run.generations) or sorted(
        {s for rows in run.metric_rows.values() for s in rows})
    status = {row["sample_id"]: row.get("stop_reason") or "" for row in run.samples}
    rows = []
    for sample_id in ids[:MAX_SAMPLE_ROWS]:
        cells = []
        for metric in metrics:
            row = run.metric_rows[metric].get(sample_id)
            if row is None:
                cells.append(("–", ""))
                continue
            state = (row.get("diagnostics") or {}).get("status", "")
            value = row_value(row)
            if state in ("ok", "fail") and value is not None:
                cells.append((fmt(value), repr(value)))
            else:
                cells.append((state or "–", ""))
        rows.append({"id": sample_id, "status": status.get(sample_id, ""), "cells": cells})
    return {"label": run.label, "metrics": metrics, "rows": rows, "more": max(0, len(ids) - MAX_SAMPLE_ROWS)}


def sections(runs: list[StreamedRun], measurements: list[str]) -> dict[str, Any]:
    """What a benchmark's section shows of its runs' row files (``page.section_parts``; the rest
    reads only manifests and results), the whole-file way: the data, which the page draws."""
    whole = [load_whole(run) for run in runs]
    return {"horizon": horizon_curves(whole), "latency": latency_data(whole), "strips": strips(whole, measurements),
            "failures": [failures(r) for r in whole], "tables": [sample_table(r) for r in whole]}
