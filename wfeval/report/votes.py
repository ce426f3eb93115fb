"""What people's votes say (``python -m wfeval.arena``): ratings, rater agreement, and which
automatic measure agrees with people.

The votes file of a sweep is ``arena.sqlite`` in the sweep folder (or in a run folder):
:func:`votes_near` finds it beside the runs read. A vote counts only while it is attached to the
outputs that were seen: both runs are among the runs read and both videos' sha256 are still the
runs' generated videos of that sample; other votes are counted as stale and left out.

- **Ratings**: Bradley–Terry over models (a model: its cache key; ties and "both bad" as half a win
  each), Elo-scaled, with percentile bootstrap intervals over votes
  (:mod:`wfeval.stats.ratings`) and the number of votes behind each.
- **Rater agreement**: with two raters Cohen's κ, with more Fleiss' κ over the pairs every rater
  judged (a pair: the sample and the two models, sides put in one order).
- **Which measure agrees with people**: per automatic measure with a direction, the share of
  decided votes (``a`` or ``b``) where the measure's per-sample values prefer the same video
  (Wilson interval; votes where the measure ties or has no value are not counted), and Kendall's τ
  between the models' Elo ratings and the measure's headline values (3 models or more).

A model that lost (or won) every vote it was in has no finite maximum-likelihood rating: its
rating and interval come from the prior alone, and the summary flags it (``prior_only``); so does
a set of votes that does not connect the models both ways (the distance between the groups is the
prior's). Rater names are shown as one inert line (:func:`wfeval.report.escape.plain`).
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any, Iterable, Sequence

import numpy as np

from wfeval.report.runs import Entry, column_key
from wfeval.report.vote_tables import agreement_table, notes, ratings_table, render_text, section  # noqa: F401
from wfeval.results.record import Aggregate, MeasurementInfo
from wfeval.storage.rundir import FILES
from wfeval.storage.votes import Vote, read_votes

NOT_QUALITY_IDS = ("generated_rate", "artifact_count")
MIN_MODELS_TAU = 3


def votes_near(run_dirs: Iterable[Path | None]) -> list[Path]:
    """The votes files of the runs' folders or of the sweep folders holding them (one that is a
    symbolic link: ValueError, as SQLite could write beside its target)."""
    found: list[Path] = []
    for run_dir in run_dirs:
        if run_dir is None:
            continue
        for folder in (Path(run_dir), Path(run_dir).parent):
            if (folder / FILES.arena).is_symlink():
                raise ValueError(f"{folder / FILES.arena}: a votes file that is a symbolic link is not read; "
                                 "replace the link by the file")
            path = (folder / FILES.arena).resolve()
            if path.is_file() and path not in found:
                found.append(path)
    return found


def generated_videos(run_dir: Path) -> dict[str, dict[str, Any]]:
    """Sample id → the generated video's stored ref (a dict with ``sha256``), the last record winning."""
    from wfeval.storage.rundir import read_jsonl, request_sample_id

    out: dict[str, dict[str, Any]] = {}
    for record in read_jsonl(run_dir / FILES.generations):
        sample = request_sample_id(record)
        artifacts = ((record.get("result") if isinstance(record, dict) else None) or {}).get("artifacts") or {}
        key = "generated_video" if "generated_video" in artifacts else next(iter(artifacts), None)
        ref = artifacts.get(key) if key else None
        if isinstance(sample, str) and isinstance(ref, dict) and isinstance(ref.get("sha256"), str):
            out[sample] = ref
        elif isinstance(sample, str):
            out.pop(sample, None)
    return out


def model_id(entry: Entry) -> str:
    return entry.model_key or entry.model_name


@dataclass
class ArenaSummary:
    labels: dict[str, str]  # model id -> shown name
    order: list[str]  # model ids, best first
    elo: dict[str, tuple[float, float, float, int]]  # model id -> (elo, low, high, votes)
    used: int
    stale: int
    raters: dict[str, int]
    kappa: dict[str, Any] | None
    agreement: list[dict[str, Any]] = field(default_factory=list)
    level: float = 0.95
    prior_only: dict[str, str] = field(default_factory=dict)  # model id -> why its rating is the prior's
    groups: list[list[str]] = field(default_factory=list)  # models the votes connect both ways, when more than one

    def __bool__(self) -> bool:
        return self.used > 0


def _attached(votes: Sequence[Vote], entries: Sequence[Entry]) -> tuple[list[tuple[Vote, Entry, Entry]], int]:
    by_run = {e.run_id: e for e in entries if e.document is not None and e.run_dir is not None}
    videos: dict[str, dict[str, dict[str, Any]]] = {}
    kept, stale = [], 0
    for vote in votes:
        a, b = by_run.get(vote.run_id_a), by_run.get(vote.run_id_b)
        if a is None or b is None:
            stale += 1
            continue
        for e in (a, b):
            if e.run_id not in videos:
                videos[e.run_id] = generated_videos(e.run_dir)  # type: ignore[arg-type]
        seen_a = (videos[a.run_id].get(vote.sample_id) or {}).get("sha256")
        seen_b = (videos[b.run_id].get(vote.sample_id) or {}).get("sha256")
        if (seen_a, seen_b) != (vote.video_a, vote.video_b):
            stale += 1
            continue
        kept.append((vote, a, b))
    return kept, stale


def _kappa(kept: Sequence[tuple[Vote, Entry, Entry]]) -> dict[str, Any] | None:
    from wfeval.stats.ratings import cohen_kappa, fleiss_kappa

    labels: dict[tuple[str, str, str, str], dict[str, str]] = {}
    for vote, a, b in kept:
        first, second = sorted((model_id(a), model_id(b)))
        flip = model_id(a) != first
        choice = {"a": "b", "b": "a"}.get(vote.choice, vote.choice) if flip else vote.choice
        labels.setdefault((vote.column, vote.sample_id, first, second), {})[vote.rater] = choice
    raters = sorted({r for item in labels.values() for r in item})
    if len(raters) < 2:
        return None
    shared = [item for item in labels.values() if all(r in item for r in raters)]
    if not shared:
        return {"method": "Cohen's κ" if len(raters) == 2 else "Fleiss' κ", "value": None, "items": 0,
                "raters": len(raters)}
    if len(raters) == 2:
        value = cohen_kappa([i[raters[0]] for i in shared], [i[raters[1]] for i in shared])
        return {"method": "Cohen's κ", "value": value, "items": len(shared), "raters": 2}
    categories = ("a", "b", "tie", "both_bad")
    table = np.array([[sum(item[r] == c for r in raters) for c in categories] for item in shared])
    return {"method": "Fleiss' κ", "value": fleiss_kappa(table), "items": len(shared), "raters": len(raters)}


def _measures(entries: Sequence[Entry]) -> dict[str, bool]:
    out: dict[str, bool] = {}
    for e in entries:
        for measurement, info in (e.document.metrics if e.document is not None else {}).items():
            higher = info.higher_is_better
            if isinstance(higher, bool) and measurement.rsplit(".", 1)[-1] not in NOT_QUALITY_IDS:
                out.setdefault(measurement, higher)
    return out


def _agreement(kept, entries, elo, level) -> list[dict[str, Any]]:
    from scipy.stats import kendalltau

    from wfeval.report.paired.samples import read_rows
    from wfeval.stats.summary import wilson_interval

    directions = _measures(entries)
    metric_of = {m: m.split(".", 1)[1] if "." in m else m for m in directions}
    values: dict[str, dict[str, Any]] = {}
    runs = {e.run_id: e for _, a, b in kept for e in (a, b)}
    for run_id, e in runs.items():
        tables = read_rows(e.run_dir, set(metric_of.values()))  # type: ignore[arg-type]
        values[run_id] = {m: tables[metric_of[m]].values for m in directions}
    rows = []
    for measurement, higher in directions.items():
        agree = counted = tied = 0
        for vote, a, b in kept:
            if vote.choice not in ("a", "b") or vote.column != column_key(a):
                continue
            va = values[a.run_id][measurement].get(vote.sample_id)
            vb = values[b.run_id][measurement].get(vote.sample_id)
            if va is None or vb is None or measurement not in a.results:
                continue
            if va == vb:
                tied += 1
                continue
            prefers = "a" if (va > vb) == higher else "b"
            counted += 1
            agree += prefers == vote.choice
        per_model: dict[str, float] = {}
        for e in runs.values():
            agg = e.results.get(measurement)
            value = agg.value if agg is not None else None
            if value is not None:
                per_model[model_id(e)] = float(value) if higher else -float(value)
        both = [m for m in per_model if m in elo]
        tau = None
        if len(both) >= MIN_MODELS_TAU:
            found = kendalltau([elo[m][0] for m in both], [per_model[m] for m in both])
            tau = None if np.isnan(found.statistic) else float(found.statistic)
        ci = wilson_interval(agree, counted, confidence=level) if counted else None
        rows.append({"measure": measurement, "agree": agree, "decided": counted, "tied": tied,
                     "share": agree / counted if counted else None, "low": ci["low"] if ci else None,
                     "high": ci["high"] if ci else None, "tau": tau, "models": len(both)})
    rows.sort(key=lambda r: (r["share"] is None, -(r["share"] or 0.0)))
    return rows


def summarize(entries: Sequence[Entry], votes: Sequence[Vote], *, n_resamples: int = 1000,
              confidence: float = 0.95, seed: int = 0) -> ArenaSummary:
    """Ratings, rater agreement and measure agreement of the votes attached to ``entries``."""
    from wfeval.stats.ratings import bootstrap_ratings, unbounded, win_matrix

    kept, stale = _attached(votes, entries)
    ids = sorted({model_id(e) for _, a, b in kept for e in (a, b)})
    names = {model_id(e): e.model_name for _, a, b in kept for e in (a, b)}
    labels = {m: names[m] if list(names.values()).count(names[m]) == 1 else f"{names[m]} ({m[:8]})" for m in ids}
    index = {m: i for i, m in enumerate(ids)}
    winners, losers, ties = [], [], []
    for vote, a, b in kept:
        first, second = (b, a) if vote.choice == "b" else (a, b)
        winners.append(index[model_id(first)])
        losers.append(index[model_id(second)])
        ties.append(vote.choice in ("tie", "both_bad"))
    ratings = bootstrap_ratings(winners, losers, ties, len(ids), n_resamples=n_resamples, confidence=confidence,
                                seed=seed)
    elo = {m: (float(ratings.elo[i]), float(ratings.low[i]), float(ratings.high[i]), int(ratings.votes[i]))
           for m, i in index.items()}
    order = sorted(ids, key=lambda m: -elo[m][0])
    raters: dict[str, int] = {}
    for vote, _, _ in kept:
        raters[vote.rater] = raters.get(vote.rater, 0) + 1
    flags, groups = unbounded(win_matrix(winners, losers, ties, len(ids)))
    return ArenaSummary(labels, order, elo, len(kept), stale, raters, _kappa(kept),
                        _agreement(kept, entries, elo, confidence) if kept else [], confidence,
                        {ids[i]: why for i, why in flags.items()},
                        [sorted((ids[i] for i in g), key=lambda m: -elo[m][0]) for g in groups] if len(groups) > 1 else [])


def summary_of(entries: Sequence[Entry], paths: Iterable[Path] | None = None, **kw: Any) -> ArenaSummary | None:
    """The summary of the votes files beside ``entries`` (or ``paths``); None when there is none."""
    files = list(paths) if paths is not None else votes_near(e.run_dir for e in entries)
    votes = [v for f in files for v in read_votes(f)]
    unique = list({v.vote_id: v for v in votes}.values())
    return summarize(entries, unique, **kw) if unique else None


def add_column(board, s: ArenaSummary | None) -> None:
    """The ratings as a column ``arena`` (Elo, its interval, votes) of every leaderboard column: an
    aggregate ``<benchmark>.arena`` (and its direction and unit) added to a copy of each run's
    results document in memory (never written; ``entry.document`` is replaced by the copy)."""
    if not s:
        return
    for column in board.columns:
        column.measurements.append("arena")
        column.directions["arena"], column.units["arena"] = True, "Elo"
        for row in board.rows:
            entry = row.entries.get(column.key)
            if entry is None or entry.document is None or model_id(entry) not in s.elo:
                continue
            value, low, high, n = s.elo[model_id(entry)]
            measurement = column.measurement("arena")
            entry.document = replace(entry.document, results={**entry.results, measurement: Aggregate(
                valid=True, diagnostics={"value": round(value), **({"prior_only": s.prior_only[model_id(entry)]}
                                                                   if model_id(entry) in s.prior_only else {})},
                n_valid=n, n_total=n,
                confidence_interval={"low": round(low), "high": round(high), "method": "bootstrap"})},
                metrics={**entry.document.metrics, measurement: MeasurementInfo(
                    higher_is_better=True, unit="Elo", family="people", bounds=[None, None])})


def on_board(board, entries: Sequence[Entry]) -> ArenaSummary | None:
    """The votes beside ``entries``, added to ``board`` as its ``arena`` column; the summary (None: no votes)."""
    summary = summary_of(entries)
    add_column(board, summary)
    return summary
