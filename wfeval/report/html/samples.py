"""The samples' sections: best / median / worst pictures per metric, failures, the per-sample table.

Size bounds, whatever the number of samples: three strips (best, median, worst) per metric and
run, the failures grouped by reason (the ``MAX_GROUPS`` largest groups, each with its count and
first ``MAX_IDS`` sample ids), and a per-sample table of at most ``MAX_SAMPLE_ROWS`` rows per run.
"""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from wfeval.report.html.load import RunData
from wfeval.report.html.values import fmt, higher_is_better, ok_rows, row_value

MAX_SAMPLE_ROWS = 2000
MAX_IDS = 12
MAX_GROUPS = 100
MAX_ACTIONS = 64


def _actions(request: dict[str, Any]) -> str:
    controls = request.get("controls") or {}
    actions = controls.get("actions")
    if not isinstance(actions, list):
        return ""
    names = controls.get("action_names")
    words = [names[a] if isinstance(names, list) and isinstance(a, int) and 0 <= a < len(names) else str(a)
             for a in actions[:MAX_ACTIONS]]
    more = f" … (+{len(actions) - MAX_ACTIONS})" if len(actions) > MAX_ACTIONS else ""
    return " ".join(words) + more


def sample_values(run: RunData, sample_id: str) -> list[tuple[str, str]]:
    out = []
    for metric, rows in run.metric_rows.items():
        row = rows.get(sample_id)
        if row is None:
            continue
        status = (row.get("diagnostics") or {}).get("status", "")
        value = row_value(row)
        out.append((metric, fmt(value) if status in ("ok", "fail") and value is not None else status or "–"))
    return out


def strips(runs: list[RunData], measurements: list[str]) -> list[dict[str, Any]]:
    """Per measurement, per run: the best, median and worst sample as a side-by-side moving picture."""
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
            scored.sort(key=lambda t: (-t[0] if higher is not False else t[0], t[1]))  # best first
            names = ("best", "median", "worst") if higher is not None else ("highest", "median", "lowest")
            picks = list(zip(names, (scored[0], scored[len(scored) // 2], scored[-1])))
            if scored[0][0] == scored[-1][0]:  # every sample has the same value: one picture says it all
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


def failures(run: RunData) -> dict[str, Any]:
    """Failed generations and skipped / errored metric items, grouped by where and why."""
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
    hidden = items[MAX_GROUPS:]  # e.g. an error message that names its sample: one group per sample
    return {"label": run.label, "reasons": items[:MAX_GROUPS], "total": sum(i["count"] for i in items),
            "hidden_groups": len(hidden), "hidden_items": sum(i["count"] for i in hidden),
            "run_status": run.status, "run_error": run.manifest.get("error")}


def sample_table(run: RunData) -> dict[str, Any]:
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
