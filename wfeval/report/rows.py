"""Flat rows from results.json documents: what export, compare and the Markdown report share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any, Iterable, Iterator

from wfeval.report.units import short_unit
from wfeval.results import headline
from wfeval.storage.rundir import FILES

ROW_FIELDS = ("run_id", "model", "benchmark", "measurement", "value", "ci_low", "ci_high", "ci_method",
              "n_valid", "n_total", "n_skipped", "coverage", "valid", "higher_is_better", "eligible", "run_dir",
              "protocol", "unit")


def protocol_label(document: dict[str, Any]) -> str:
    """The protocol a run was generated under, with its policy (``closed_loop(random)``) or planner
    method: results of different protocols measure different things and are never ranked together."""
    record = document.get("protocol") or {}
    label = str(record.get("name") or "open_loop")
    policy = record.get("policy")
    if isinstance(policy, dict) and policy.get("_target_"):
        short = str(policy["_target_"]).rsplit(".", 1)[-1].removesuffix("Policy").lower() or "policy"
        label += f"({short})"
    planner = record.get("planner")
    if isinstance(planner, dict) and planner.get("method"):
        label += f"({planner['method']})"
    return label


def find_results(paths: Iterable[str | Path]) -> list[Path]:
    """results.json of each run dir given, or of every run below a sweep/outputs dir (sorted)."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_file() and path.name == FILES.results:
            found.append(path)
        elif (path / FILES.results).is_file():
            found.append(path / FILES.results)
        elif path.is_dir():
            found.extend(p for p in sorted(path.rglob(FILES.results)) if p.parent.name != FILES.replay)
        else:
            raise FileNotFoundError(f"{path}: no such run directory or results.json")
    if not found:
        raise FileNotFoundError(f"no results.json under {', '.join(map(str, paths))}")
    return found


def load_document(path: Path) -> dict[str, Any]:
    """A run's results.json as it is written (its folder is the caller's to keep: ``Entry.run_dir``)."""
    return json.loads(path.read_text(encoding="utf-8"))


def coverage(agg: dict[str, Any]) -> float | None:
    """n_valid / n_total of an aggregate (None for an empty one): the share of samples its value rests on."""
    total = agg.get("n_total") or 0
    return agg.get("n_valid", 0) / total if total else None


def rows(document: dict[str, Any], run_dir: str | Path | None = None) -> Iterator[dict[str, Any]]:
    eligible = (document.get("evidence") or {}).get("eligible")
    for measurement, agg in document["results"].items():
        ci = agg.get("confidence_interval") or {}
        yield {
            "run_id": document["run_id"],
            "model": document["model"]["name"],
            "benchmark": document["benchmark"]["id"],
            "measurement": measurement,
            "value": headline(agg),
            "ci_low": ci.get("low"),
            "ci_high": ci.get("high"),
            "ci_method": ci.get("method"),
            "n_valid": agg["n_valid"],
            "n_total": agg["n_total"],
            "n_skipped": agg["n_skipped"],
            "coverage": coverage(agg),
            "valid": agg["valid"],
            "higher_is_better": (document.get("metrics") or {}).get(measurement, {}).get("higher_is_better"),
            "eligible": eligible,
            "run_dir": None if run_dir is None else str(run_dir),
            "protocol": protocol_label(document),
            "unit": short_unit(((document.get("metrics") or {}).get(measurement) or {}).get("unit")),
        }
