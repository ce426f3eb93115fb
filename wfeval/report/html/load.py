"""Read run folders as data: JSON and JSONL files only, never a ``_target_`` built from them.

A run folder is what the pipeline wrote (``docs/run-directory.md``). Every file is optional
except ``manifest.json``: a failed run has no ``results.json`` and is still shown (with its
error). A torn last JSONL line (a killed run) is ignored, as the pipeline's own readers do.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Iterable, Iterator

from wfeval import rundir
from wfeval.api import ArtifactRef


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The object rows of a run file (torn lines skipped by :func:`wfeval.rundir.read_jsonl`)."""
    if path.is_file():
        yield from (row for row in rundir.read_jsonl(path) if isinstance(row, dict))


def _read_json(path: Path) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    return data if isinstance(data, dict) else None


@dataclass
class RunData:
    """Everything the report shows about one run, read from its folder."""

    path: Path
    manifest: dict[str, Any]
    results: dict[str, Any] | None
    samples: list[dict[str, Any]] = field(default_factory=list)
    metric_rows: dict[str, dict[str, dict[str, Any]]] = field(default_factory=dict)  # metric → sample → row
    generations: dict[str, dict[str, Any]] = field(default_factory=dict)  # sample → {"request", "result"}
    steps: list[dict[str, Any]] = field(default_factory=list)
    overrides: list[str] | None = None
    label: str = ""

    @property
    def run_id(self) -> str:
        return str(self.manifest.get("run_id") or self.path.name)

    @property
    def model_name(self) -> str:
        return str((self.manifest.get("model") or {}).get("name") or (self.results or {}).get("model", {}).get("name")
                   or "?")

    @property
    def benchmark_id(self) -> str:
        return str((self.manifest.get("benchmark") or {}).get("id") or "")

    @property
    def status(self) -> str:
        return str(self.manifest.get("status") or "unknown")

    def store_dir(self) -> Path | None:
        store = self.manifest.get("store_dir")
        return Path(store) if store else None

    def ref(self, data: dict[str, Any] | None) -> ArtifactRef | None:
        """An :class:`ArtifactRef` from its stored dict (data only: a pointer, nothing is built)."""
        if not isinstance(data, dict):
            return None
        try:
            return ArtifactRef.from_dict(data)
        except Exception:  # noqa: BLE001 - a malformed ref is shown as missing, not a crash
            return None


def load_run(path: Path) -> RunData:
    path = Path(path)
    manifest = _read_json(path / "manifest.json")
    if manifest is None:
        raise FileNotFoundError(f"{path}: no manifest.json (not a wfeval run folder)")
    run = RunData(path=path, manifest=manifest, results=_read_json(path / "results.json"))
    run.samples = list(read_jsonl(path / "samples.jsonl"))
    for row in read_jsonl(path / "metrics.jsonl"):  # the last row per metric and sample wins
        metric, sample = row.get("metric_id"), row.get("sample_id")
        if metric and sample:
            run.metric_rows.setdefault(str(metric), {})[str(sample)] = row
    for row in read_jsonl(path / "generations.jsonl"):
        sample = ((row.get("request") or {}).get("sample_id"))
        if sample:
            run.generations[str(sample)] = row
    run.steps = list(read_jsonl(path / "steps.jsonl"))
    run.overrides = _overrides(path / ".hydra" / "overrides.yaml")
    return run


def _overrides(path: Path) -> list[str] | None:
    """Hydra's record of the job's own overrides (a YAML list of strings), read as plain data."""
    if not path.is_file():
        return None
    import yaml  # PyYAML, a dependency of omegaconf

    try:
        data = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError:
        return None
    return [str(x) for x in data] if isinstance(data, list) else None


def find_runs(paths: Iterable[str | Path]) -> list[Path]:
    """The run folders given, or every run folder below a sweep / outputs folder (sorted)."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_file() and path.name in ("manifest.json", "results.json"):
            path = path.parent
        if (path / "manifest.json").is_file():
            found.append(path)
        elif path.is_dir():
            found.extend(p.parent for p in sorted(path.rglob("manifest.json")))
        else:
            raise FileNotFoundError(f"{path}: no such run folder")
    unique = list(dict.fromkeys(p.resolve() for p in found))
    if not unique:
        raise FileNotFoundError(f"no run folder (manifest.json) under {', '.join(map(str, paths))}")
    return unique


def load_runs(paths: Iterable[str | Path]) -> list[RunData]:
    runs = [load_run(p) for p in find_runs(paths)]
    names = [r.model_name for r in runs]
    for run in runs:  # a model that appears twice is told apart by its run folder
        run.label = run.model_name if names.count(run.model_name) == 1 else f"{run.model_name} ({run.path.name})"
    return runs
