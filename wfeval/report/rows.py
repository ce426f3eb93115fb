"""Flat rows from a run's results (:class:`~wfeval.results.record.RunResults`): what export,
compare and the Markdown report share."""

from __future__ import annotations

from pathlib import Path
from typing import Any, Iterable, Iterator

from wfeval.report.units import short_unit
from wfeval.results.record import ProtocolInfo, RunResults, read_results
from wfeval.storage.rundir import FILES

ROW_FIELDS = ("run_id", "model", "benchmark", "measurement", "value", "ci_low", "ci_high", "ci_method",
              "n_valid", "n_total", "n_skipped", "coverage", "valid", "higher_is_better", "eligible", "run_dir",
              "protocol", "unit")


def protocol_label(protocol: ProtocolInfo | None) -> str:
    """The protocol a run was generated under, with its policy (``closed_loop(random)``) or planner
    method (:attr:`ProtocolInfo.label`); open loop where none is recorded."""
    return (protocol if protocol is not None else ProtocolInfo()).label


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


def load_document(path: Path) -> RunResults:
    """A run's results.json (:func:`~wfeval.results.record.read_results`; its folder is the
    caller's to keep: ``Entry.run_dir``)."""
    results = read_results(path)
    if results is None:
        raise FileNotFoundError(f"{path}: no results.json")
    return results


def rows(document: RunResults, run_dir: str | Path | None = None) -> Iterator[dict[str, Any]]:
    eligible = document.evidence.eligible
    for measurement, agg in document.results.items():
        info = document.info(measurement)
        yield {
            "run_id": document.run_id,
            "model": document.model.name,
            "benchmark": document.benchmark.id,
            "measurement": measurement,
            "value": agg.value,
            "ci_low": agg.ci_low,
            "ci_high": agg.ci_high,
            "ci_method": agg.ci_method,
            "n_valid": agg.n_valid,
            "n_total": agg.n_total,
            "n_skipped": agg.n_skipped,
            "coverage": agg.coverage,
            "valid": agg.valid,
            "higher_is_better": info.higher_is_better,
            "eligible": eligible,
            "run_dir": None if run_dir is None else str(run_dir),
            "protocol": document.protocol.label,
            "unit": short_unit(info.unit),
        }
