"""The samples' sections: best / median / worst pictures per metric, failures, the per-sample table.

Size bounds, whatever the number of samples: three strips (best, median, worst) per metric and
run, the failures grouped by reason (the ``MAX_GROUPS`` largest groups, each with its count and
first ``MAX_IDS`` sample ids), and a per-sample table of at most ``MAX_SAMPLE_ROWS`` rows per run.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

import numpy as np

from wfeval.report.html.columns import decode, sort_by
from wfeval.report.html.digest import MAX_IDS, MAX_SAMPLE_ROWS
from wfeval.report.html.load import RunData
from wfeval.report.html.values import fmt, higher_is_better
from wfeval.report.numbers import EN_DASH, significant

__all__ = ["MAX_GROUPS", "MAX_IDS", "MAX_SAMPLE_ROWS", "MAX_VIEWER", "failures", "pictured", "sample_table",
           "sample_values", "strip_ids", "strips", "viewer", "viewer_ids"]

MAX_GROUPS = 100
MAX_ACTIONS = 64
MAX_VIEWER = 8  # samples the viewer carries per benchmark (every model's frames of each)
NO_PICTURES = ("coverage", "interactive", "distribution", "people")  # families a sample's picture cannot explain


def pictured(runs: list[RunData], measurement: str) -> bool:
    """Whether pictures of samples explain this measurement: not for a count or a rate of outputs
    (``coverage``: generated_rate, artifact_count), a timing (``interactive``) or a distribution
    (FVD: no per-sample value). A metric that declares no family gets pictures."""
    for run in runs:
        info = run.results.metrics.get(measurement) if run.results is not None else None
        if info is not None and info.family is not None:
            return info.family not in NO_PICTURES
    return measurement.split(".", 1)[-1] not in ("generated_rate", "artifact_count", "fvd", "step_latency",
                                                 "real_time_factor")  # a run written before families


def _actions(request: dict[str, Any]) -> str:
    controls = request.get("controls") or {}
    actions = controls.get("actions")
    if not isinstance(actions, list):
        return ""
    names = controls.get("action_names")
    words = [_vector(a) if isinstance(a, list) else
             names[a] if isinstance(names, list) and isinstance(a, int) and 0 <= a < len(names) else str(a)
             for a in actions[:MAX_ACTIONS]]
    more = f" … (+{len(actions) - MAX_ACTIONS})" if len(actions) > MAX_ACTIONS else ""
    return " ".join(words) + more


def _vector(action: list) -> str:
    """A continuous action as a vector: ``(0.12, -0.5)`` (4 significant digits; nested for 2-D)."""
    parts = [_vector(v) if isinstance(v, list) else significant(v) if isinstance(v, (int, float)) else str(v)
             for v in action]
    return "(" + ", ".join(parts) + ")"


def sample_values(run: RunData, sample_id: str) -> list[tuple[str, str]]:
    out = []
    for metric, table in run.metrics.items():
        row = table.positions([sample_id]).get(sample_id)
        if row is None:
            continue
        status, value = table.cell(row)
        out.append((metric, fmt(value) if status in ("ok", "fail") and value is not None else status or EN_DASH))
    return out


def _picks(run: RunData, metric: str, higher: bool | None) -> tuple[int, list[tuple[str, tuple[float, str]]]] | None:
    """(scored samples, [(rank, (value, sample id))]): best, median and worst by value, then by id."""
    table = run.metrics.get(metric)
    values, ids = table.scored() if table is not None else ((), ())
    if not len(values):
        return None
    order = sort_by(-values if higher is not False else values, ids)  # best first
    n = len(order)
    scored = [(float(values[i]), decode(ids[i])) for i in (order[0], order[n // 2], order[-1])]
    names = ("best", "median", "worst") if higher is not None else ("highest", "median", "lowest")
    picks = list(zip(names, scored))
    if scored[0][0] == scored[-1][0]:  # every sample has the same value: one picture says it all
        picks = [(f"all {n} equal", scored[0])]
    return n, picks


def strip_ids(runs: list[RunData], measurements: list[str]) -> list[str]:
    """The sample ids :func:`strips` will show (from the metric columns alone, nothing read)."""
    ids: list[str] = []
    for m in measurements:
        metric, higher = (m.split(".", 1)[1] if "." in m else m), higher_is_better(runs, m)
        for run in runs:
            if m.startswith(f"{run.benchmark_id}.") and (found := _picks(run, metric, higher)) is not None:
                ids += [sample_id for _, (_, sample_id) in found[1]]
    return list(dict.fromkeys(ids))


def strips(runs: list[RunData], measurements: list[str]) -> list[dict[str, Any]]:
    """Per measurement, per run: the best, median and worst sample as a side-by-side moving picture."""
    from wfeval.report.html.media import sample_strip

    chosen = []
    wanted: dict[int, set[str]] = defaultdict(set)
    for m in measurements:
        metric = m.split(".", 1)[1] if "." in m else m
        higher = higher_is_better(runs, m)
        groups = []
        for i, run in enumerate(runs):
            if m.startswith(f"{run.benchmark_id}.") and (found := _picks(run, metric, higher)) is not None:
                groups.append((i, run, *found))
                wanted[i].update(sample_id for _, (_, sample_id) in found[1])
        chosen.append((m, groups))
    records = {i: runs[i].generation_records(ids) for i, ids in wanted.items()}  # one reading per run
    cache: dict[tuple[str, str], Any] = {}
    out = []
    for m, groups in chosen:
        shown = []
        for i, run, n, picks in groups:
            items = []
            for rank, (value, sample_id) in picks:
                record = records[i].get(sample_id)
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
            shown.append({"label": run.label, "n": n, "picks": items})
        out.append({"measurement": m, "groups": shown,
                    "note": "" if shown else "no per-sample values (e.g. a distribution metric such as FVD)"})
    return out


def failures(run: RunData) -> dict[str, Any]:
    """Failed generations and skipped / errored metric items, grouped by where and why."""
    groups: dict[tuple, tuple[int, list]] = {}

    def add(key: tuple, count: int, ids: list) -> None:
        before = groups.get(key, (0, []))
        groups[key] = (before[0] + count, sorted(before[1] + ids)[:MAX_IDS])

    generation = run.samples.failures if run.samples.has_rows else run.generations.failures
    for key, count, ids in generation.items():
        add(key, count, ids)
    for metric, table in run.metrics.items():
        for status, reason, count, ids in table.not_scored(MAX_IDS):
            add((metric, status, reason), count, ids)
    items = [{"where": where, "status": status, "reason": reason, "count": count,
              "ids": ids, "more": max(0, count - MAX_IDS)}
             for (where, status, reason), (count, ids) in sorted(
                 groups.items(), key=lambda kv: (kv[0][0] != "generation", -kv[1][0], kv[0]))]
    hidden = items[MAX_GROUPS:]  # e.g. an error message that names its sample: one group per sample
    return {"label": run.label, "reasons": items[:MAX_GROUPS], "total": sum(i["count"] for i in items),
            "hidden_groups": len(hidden), "hidden_items": sum(i["count"] for i in hidden),
            "run_status": run.status, "run_error": run.manifest.error}


def _table_ids(run: RunData) -> tuple[list[Any], int, dict[Any, str]]:
    """The table's first ``MAX_SAMPLE_ROWS`` sample ids, how many there are, their generation status:
    from samples.jsonl, else generations.jsonl, else every sample id of metrics.jsonl, sorted."""
    if run.samples.has_rows:
        return run.samples.ids, run.samples.count, run.samples.status
    if run.generations.count:
        return run.generations.ids, run.generations.count, {}
    columns = [table.ids.values for table in run.metrics.values()]
    unique = np.unique(np.concatenate(columns)) if columns else []
    return [decode(raw) for raw in unique[:MAX_SAMPLE_ROWS]], len(unique), {}


def sample_table(run: RunData) -> dict[str, Any]:
    metrics = list(run.metrics)
    ids, count, status = _table_ids(run)
    ids = ids[:MAX_SAMPLE_ROWS]
    places = {metric: table.positions(ids) for metric, table in run.metrics.items()}
    rows = []
    for sample_id in ids:
        cells = []
        for metric in metrics:
            row = places[metric].get(sample_id)
            if row is None:
                cells.append((EN_DASH, ""))
                continue
            state, value = run.metrics[metric].cell(row)
            if state in ("ok", "fail") and value is not None:
                cells.append((fmt(value), repr(value)))
            else:
                cells.append((state or EN_DASH, ""))
        rows.append({"id": sample_id, "status": status.get(sample_id, ""), "cells": cells})
    return {"label": run.label, "metrics": metrics, "rows": rows, "more": max(0, count - MAX_SAMPLE_ROWS)}


def viewer_ids(runs: list[RunData], picks: list[str], limit: int = MAX_VIEWER) -> tuple[list[str], int]:
    """The samples the viewer carries: those the strips show, then failed ones, then the first
    ones; and how many samples the runs have."""
    chosen = list(dict.fromkeys(picks))
    for run in runs:
        generation = run.samples.failures if run.samples.has_rows else run.generations.failures
        chosen += [i for _, _, ids in generation.items() for i in ids]
    total = 0
    for run in runs:
        ids, count, _ = _table_ids(run)
        chosen += list(ids[:limit])
        total = max(total, count)
    return list(dict.fromkeys(str(i) for i in chosen))[:limit], total


def viewer(runs: list[RunData], picks: list[str], limit: int = MAX_VIEWER) -> dict[str, Any]:
    """The same samples across every model: per sample the reference and each model's generated
    frames (one still sprite each, stepped through by the page), its status and values."""
    from wfeval.report.html.media import sample_videos, sprite

    ids, total = viewer_ids(runs, picks, limit)
    records = [run.generation_records(ids) for run in runs]
    samples = []
    for sample_id in ids:
        panels, references = [], {}
        for run, found in zip(runs, records):
            record = found.get(sample_id)
            if record is None:
                panels.append({"run": run, "record": None})
                continue
            (ref, ref_why), (gen, gen_why) = sample_videos(record["request"], record["result"], run.ref,
                                                           run.store_dir())
            sha = ((record["request"].get("references") or {}).get("video") or {}).get("sha256")
            references.setdefault(sha, (ref, ref_why, run.label))
            panels.append({"run": run, "record": record, "gen": gen, "gen_why": gen_why, "ref_sha": sha})
        shared = len(references) <= 1
        first_ref = next((v for v in references.values() if v[0] is not None), None)
        size = first_ref[0].shape[1:3] if first_ref is not None else None
        if size is not None:
            scale = min(1.0, 128 / max(size))  # media.MAX_SIDE
            size = (max(1, int(round(size[0] * scale))), max(1, int(round(size[1] * scale))))
        out_panels = []
        if shared and references:
            ref, why, _ = next(iter(references.values()))
            out_panels.append({"title": "reference", "kind": "reference", "sprite": sprite(ref, why, size),
                               "status": "", "values": [], "color": "#555"})
        for panel in panels:
            run = panel["run"]
            if panel["record"] is None:
                out_panels.append({"title": run.label, "kind": "model", "sprite": None, "status": "no record",
                                   "values": [], "color": run.color, "problem": "no generation recorded"})
                continue
            if not shared:
                ref, why, _ = references[panel["ref_sha"]]
                out_panels.append({"title": f"reference ({run.label})", "kind": "reference",
                                   "sprite": sprite(ref, why, size), "status": "", "values": [], "color": "#555"})
            result = panel["record"]["result"]
            status = str(result.get("status", "ok"))
            out_panels.append({"title": run.label, "kind": "model", "sprite": sprite(panel["gen"], panel["gen_why"], size),
                               "status": status, "error": result.get("error") or "",
                               "values": sample_values(run, sample_id), "color": run.color})
        for panel in out_panels:
            panel.setdefault("error", "")
            panel.setdefault("problem", "")
        frames = max((p["sprite"].frames for p in out_panels if p.get("sprite")), default=0)
        first = next((p["record"] for p in panels if p["record"] is not None), None)
        samples.append({"id": sample_id, "panels": out_panels, "frames": frames,
                        "actions": _actions(first["request"]) if first else "",
                        "shared_reference": shared})
    return {"samples": samples, "total": total, "limit": limit}
