"""What the page shows, computed from loaded runs: leaderboard, charts, strips, failures, provenance.

Everything here reads :class:`~wfeval.report.html.load.RunData` (plain data); charts and
pictures are made by :mod:`.charts` and :mod:`.media`. Size bounds, whatever the number of
samples: three strips (best, median, worst) per metric and run, the failures grouped by reason
(the ``MAX_GROUPS`` largest groups, each with its count and first ``MAX_IDS`` sample ids), and
a per-sample table of at most ``MAX_SAMPLE_ROWS`` rows per run.
"""

from __future__ import annotations

import math
import shlex
from collections import defaultdict
from pathlib import PurePath
from typing import Any, Iterable

from wfeval.report.html import charts
from wfeval.results import headline as results_headline
from wfeval.report.html.load import RunData

MAX_SAMPLE_ROWS = 2000
MAX_IDS = 12
MAX_GROUPS = 100
MAX_ACTIONS = 64
CURVE_KEYS = (  # components key → (x of item i given the row's components, what x means)
    ("per_frame", lambda c, i: int(c.get("first_frame") or 0) + i, "frame"),
    ("per_step", lambda c, i: i + 1, "frame (change from the previous one)"),
    ("per_frame_error_px", lambda c, i: i, "frame"),
)


def fmt(value: Any, digits: int = 4) -> str:
    if value is None:
        return "–"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, float):
        if not math.isfinite(value):
            return str(value)
        return f"{value:.{digits}g}"
    return str(value)


def _number(value: Any) -> float | None:
    if isinstance(value, bool) or not isinstance(value, (int, float)):
        return None
    return float(value) if math.isfinite(value) else None


def headline(agg: dict[str, Any]) -> float | None:
    """The aggregate's headline number (:func:`wfeval.results.headline`) when it is a finite number."""
    return _number(results_headline(agg))


def measurements_of(runs: Iterable[RunData]) -> list[str]:
    out: list[str] = []
    for run in runs:
        out += [m for m in ((run.results or {}).get("results") or {}) if m not in out]
    return out


def higher_is_better(runs: Iterable[RunData], measurement: str) -> bool | None:
    for run in runs:
        info = ((run.results or {}).get("metrics") or {}).get(measurement)
        if info is not None:
            return info.get("higher_is_better")
    return None


def primary_of(runs: list[RunData], measurements: list[str]) -> str | None:
    for run in runs:
        primary = ((run.results or {}).get("scorecard") or {}).get("primary")
        if primary:
            key = f"{run.benchmark_id}.{primary}"
            if key in measurements:
                return key
    return measurements[0] if measurements else None


def _sort_key(value: float | None, higher: bool | None) -> tuple[int, float]:
    if value is None:
        return (1, 0.0)
    return (0, value if higher is False else -value)


def leaderboard(runs: list[RunData], measurements: list[str]) -> dict[str, Any]:
    primary = primary_of(runs, measurements)
    higher = higher_is_better(runs, primary) if primary else None

    def primary_value(run: RunData) -> float | None:
        agg = ((run.results or {}).get("results") or {}).get(primary or "")
        return headline(agg) if agg else None

    order = sorted(runs, key=lambda r: _sort_key(primary_value(r), higher))
    rows = []
    for rank, run in enumerate(order, 1):
        doc = run.results or {}
        cells = []
        for m in measurements:
            agg = (doc.get("results") or {}).get(m)
            if agg is None:
                cells.append({"text": "missing", "sort": "", "title": "not measured in this run", "cls": "missing"})
                continue
            value, ci = headline(agg), agg.get("confidence_interval") or {}
            diag = agg.get("diagnostics") or {}
            n_valid, n_total = agg.get("n_valid", 0), agg.get("n_total", 0)
            coverage = diag.get("coverage", n_valid / n_total if n_total else 0.0)
            interval = (f"[{fmt(ci.get('low'))}, {fmt(ci.get('high'))}]"
                        if _number(ci.get("low")) is not None else "")
            breakdown = "; ".join(f"{n}× {reason}" for reason, n in (agg.get("skip_breakdown") or {}).items())
            title = (f"{ci.get('method', 'no')} interval at {ci.get('level', '')}; coverage {fmt(coverage, 3)}"
                     + (f"; not scored: {breakdown}" if breakdown else "")
                     + (f"; {diag.get('reason')}" if not agg.get("valid") and diag.get("reason") else ""))
            cells.append({
                "text": fmt(value) if value is not None else "n/a", "interval": interval,
                "coverage": f"{n_valid}/{n_total}", "sort": "" if value is None else repr(value), "title": title,
                "cls": "low-coverage" if n_total and n_valid < n_total else "",
            })
        evidence = doc.get("evidence") or {}
        score = (doc.get("scorecard") or {}).get("score")
        rows.append({
            "rank": rank, "label": run.label, "run_id": run.run_id, "status": run.status, "cells": cells,
            "score": fmt(score), "score_sort": "" if _number(score) is None else repr(score),
            "eligible": evidence.get("eligible"), "reasons": list(evidence.get("reasons") or []),
            "error": run.manifest.get("error"),
        })
    single = len({m.split(".", 1)[0] for m in measurements}) == 1
    columns = [{"key": m, "short": m.split(".", 1)[-1] if single else m} for m in measurements]
    return {"primary": primary, "columns": columns, "rows": rows}


def metric_charts(runs: list[RunData], measurements: list[str]) -> list[dict[str, Any]]:
    out = []
    for m in measurements:
        points = []
        for i, run in enumerate(runs):
            agg = ((run.results or {}).get("results") or {}).get(m)
            ci = (agg or {}).get("confidence_interval") or {}
            points.append(charts.Point(run.label, headline(agg) if agg else None, _number(ci.get("low")),
                                       _number(ci.get("high")), charts.color(i)))
        out.append({"measurement": m, "uri": charts.interval_chart(m, points, higher_is_better(runs, m))})
    return out


def _ok_rows(run: RunData, metric: str) -> list[dict[str, Any]]:
    return [row for row in run.metric_rows.get(metric, {}).values()
            if (row.get("diagnostics") or {}).get("status", "ok" if row.get("valid") else "skip") in ("ok", "fail")]


def _row_value(row: dict[str, Any]) -> float | None:
    value = _number(row.get("normalized_value"))
    return value if value is not None else _number(row.get("raw_value"))


def horizon_charts(runs: list[RunData]) -> list[dict[str, Any]]:
    """Mean per-frame curve of each metric that keeps one (``components``), per model, with a 95% band.

    Metrics that keep the same curve (action_following and agent_position_error both keep the
    agent's per-frame position error) share one chart.
    """
    metrics: list[str] = []
    for run in runs:
        metrics += [m for m in run.metric_rows if m not in metrics]
    found: dict[tuple, dict[str, Any]] = {}
    for metric in metrics:
        curves, xlabel, component = [], "frame", ""
        for i, run in enumerate(runs):
            by_x: dict[int, list[float]] = defaultdict(list)
            for row in _ok_rows(run, metric):
                components = row.get("components") or {}
                for key, x_of, meaning in CURVE_KEYS:
                    series = components.get(key)
                    if isinstance(series, list) and series:
                        xlabel, component = meaning, key
                        for j, v in enumerate(series):
                            if _number(v) is not None:
                                by_x[x_of(components, j)].append(float(v))
                        break
            if not by_x:
                continue
            xs = sorted(by_x)
            mean = [sum(by_x[x]) / len(by_x[x]) for x in xs]
            half = [1.96 * _std(by_x[x]) / math.sqrt(len(by_x[x])) if len(by_x[x]) > 1 else 0.0 for x in xs]
            curves.append(charts.Curve(run.label, xs, mean, [m - h for m, h in zip(mean, half)],
                                       [m + h for m, h in zip(mean, half)], charts.color(i)))
        if curves:
            key = (component, tuple((c.label, tuple(c.x), tuple(c.y)) for c in curves))
            found.setdefault(key, {"metrics": [], "component": component, "xlabel": xlabel, "curves": curves})
            found[key]["metrics"].append(metric)
    return [{"metric": " ".join(f["metrics"]), "component": f["component"], "uri": charts.curve_chart(
        f"{', '.join(f['metrics'])} · {f['component']}", f["curves"], f["xlabel"], f["component"])}
        for f in found.values()]


def _std(values: list[float]) -> float:
    mean = sum(values) / len(values)
    return math.sqrt(sum((v - mean) ** 2 for v in values) / (len(values) - 1))


def _quantile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    pos = q * (len(ordered) - 1)
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def latency_chart(runs: list[RunData]) -> dict[str, Any] | None:
    """Latency per step for step-wise runs (``steps.jsonl`` rows with ``step`` > 0); None for open loop."""
    per_run = []
    for i, run in enumerate(runs):
        by_step: dict[int, list[float]] = defaultdict(list)
        for row in run.steps:
            step, latency = row.get("step"), _number(row.get("latency_seconds"))
            if isinstance(step, int) and not isinstance(step, bool) and latency is not None and not row.get("cached"):
                by_step[step].append(latency)
        if len(by_step) > 1:
            per_run.append((i, run, by_step))
    if not per_run:
        return None
    curves, table = [], []
    for i, run, by_step in per_run:
        xs = sorted(by_step)
        curves.append(charts.Curve(run.label, xs, [_quantile(by_step[x], 0.5) for x in xs],
                                   [_quantile(by_step[x], 0.1) for x in xs], [_quantile(by_step[x], 0.9) for x in xs],
                                   charts.color(i)))
        every = [v for x in xs for v in by_step[x]]
        median = _quantile(every, 0.5)
        table.append({"label": run.label, "steps": len(xs), "rows": len(every), "median": fmt(median),
                      "p90": fmt(_quantile(every, 0.9)), "rate": fmt(1 / median if median > 0 else None)})
    uri = charts.curve_chart("latency per step (median over samples, 10–90% band)", curves, "step", "seconds")
    return {"uri": uri, "table": table}


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
        value = _row_value(row)
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
            scored = [(v, r["sample_id"]) for r in _ok_rows(run, metric) if (v := _row_value(r)) is not None]
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
            value = _row_value(row)
            if state in ("ok", "fail") and value is not None:
                cells.append((fmt(value), repr(value)))
            else:
                cells.append((state or "–", ""))
        rows.append({"id": sample_id, "status": status.get(sample_id, ""), "cells": cells})
    return {"label": run.label, "metrics": metrics, "rows": rows, "more": max(0, len(ids) - MAX_SAMPLE_ROWS)}


def _program(path: str) -> str:
    """``python -m wfeval.resume`` for ``.../wfeval/resume.py`` (``-m`` puts the file in argv[0])."""
    parts = PurePath(path).with_suffix("").parts
    if "wfeval" in parts and path.endswith(".py"):
        module = list(parts[len(parts) - 1 - parts[::-1].index("wfeval"):])
        return "python -m " + ".".join(module[:-1] if module[-1] == "__main__" else module)
    return shlex.quote(path)  # a console script (``wfeval``) or a program of the user's


def provenance(run: RunData) -> dict[str, Any]:
    manifest, doc = run.manifest, run.results or {}
    argv = [str(a) for a in manifest.get("argv") or []]
    command = " ".join([_program(argv[0]), shlex.join(argv[1:])]).strip() if argv else ""
    single = "python -m wfeval " + shlex.join(run.overrides) if run.overrides is not None else ""
    fvd = []
    for m, agg in (doc.get("results") or {}).items():
        diag = agg.get("diagnostics") or {}
        if "recipe" in diag or "weights" in diag:
            recipe = diag.get("recipe")
            if isinstance(recipe, dict):
                recipe = ", ".join(f"{k}={v}" for k, v in recipe.items())
            fvd.append({"measurement": m, "recipe": recipe, "recipe_digest": diag.get("recipe_digest"),
                        "weights": (diag.get("weights") or {}).get("sha256") or "–",
                        "n": f"{diag.get('n_real', '–')} reference / {diag.get('n_generated', '–')} generated",
                        "rank_note": diag.get("rank_note")})
    bench, model = manifest.get("benchmark") or {}, manifest.get("model") or {}
    return {
        "label": run.label, "run_id": run.run_id, "path": str(run.path), "status": run.status,
        "error": manifest.get("error"),
        "fields": [
            ("status", run.status), ("started", manifest.get("started_at")), ("finished", manifest.get("finished_at")),
            ("config hash", manifest.get("config_hash")), ("benchmark", f"{bench.get('id', '?')} {bench.get('version', '')}"),
            ("dataset hash", bench.get("dataset_hash")), ("samples", bench.get("n_samples")),
            ("model", f"{model.get('name', '?')} {model.get('version', '')} ({model.get('target') or 'no target'})"),
            ("model cache key", model.get("key")), ("store", manifest.get("store_dir")),
            ("host", manifest.get("host")), ("working directory", manifest.get("cwd")),
        ],
        "versions": sorted((manifest.get("versions") or {}).items()),
        "metrics": sorted((k, v.get("version"), v.get("class")) for k, v in (manifest.get("metrics") or {}).items()),
        "command": command, "single": single if single != command else "", "fvd": fvd,
        "evidence_rules": (doc.get("evidence") or {}).get("rules"),
    }


def context(runs: list[RunData], title: str) -> dict[str, Any]:
    measurements = measurements_of(runs)
    return {
        "title": title,
        "runs": runs,
        "benchmarks": sorted({r.benchmark_id for r in runs if r.benchmark_id}),
        "leaderboard": leaderboard(runs, measurements),
        "metric_charts": metric_charts(runs, measurements),
        "horizon": horizon_charts(runs),
        "latency": latency_chart(runs),
        "strips": strips(runs, measurements),
        "failures": [failures(r) for r in runs],
        "tables": [sample_table(r) for r in runs],
        "provenance": [provenance(r) for r in runs],
        "limits": {"sample_rows": MAX_SAMPLE_ROWS, "ids": MAX_IDS},
    }
