"""A run folder's record as data: ``manifest.json`` and ``results.json`` as typed, versioned dataclasses.

One pair reads and writes them (:func:`read_run_record` / :func:`write_run_record`, and
:func:`read_manifest` / :func:`write_manifest`, :func:`read_results` / :func:`write_results`
for one file); nothing else parses a run folder's JSON. The records are
:class:`~wfeval.results.run_manifest.RunManifest` and :class:`~wfeval.results.run_results.RunResults`
(their blocks: :mod:`wfeval.results.blocks`): every block keeps the keys it was read with, in their
order (``to_dict`` gives back what ``from_dict`` was given, byte for byte once written), and
what the format leaves out has its default in one place (a run without a ``protocol`` ran open loop).

Versions: a folder written before ``schema_version`` existed (``wfeval.run/0``: no
``schema_version``, no ``protocol``, ``metric_selection`` or ``slices`` in its results) is read
through :func:`migrate_0_to_1`; :data:`MIGRATIONS` names one function per version, applied in
turn until the document is at :data:`RUN_FORMAT_VERSION`. A version this code does not know is
refused (:class:`RunRecordError`), never guessed.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Mapping

from wfeval.results.blocks import OPEN_LOOP, BenchmarkInfo, Block, ManifestMetric, ModelInfo, ProtocolInfo
from wfeval.results.run_manifest import RunManifest
from wfeval.results.run_results import (
    Aggregate,
    Evidence,
    MeasurementInfo,
    RunResults,
    Scorecard,
    ScorecardComponent,
)
from wfeval.storage.rundir import FILES, RUN_FORMAT_VERSION, RunDirectory

__all__ = ["OPEN_LOOP", "RUN_FORMAT_VERSION", "MIGRATIONS", "Aggregate", "BenchmarkInfo", "Block", "Evidence",
           "ManifestMetric", "MeasurementInfo", "ModelInfo", "ProtocolInfo", "RunManifest", "RunRecord",
           "RunRecordError", "RunResults", "Scorecard", "ScorecardComponent", "migrate", "migrate_0_to_1",
           "read_manifest", "read_results", "read_run_record", "write_manifest", "write_results", "write_run_record"]

UNVERSIONED = "wfeval.run/0"
"""What a record without ``schema_version`` is read as."""


class RunRecordError(ValueError):
    """A run folder's JSON that is not a run record this code can read (the path and why)."""


def migrate_0_to_1(document: dict[str, Any], kind: str) -> dict[str, Any]:
    """``wfeval.run/0`` → ``wfeval.run/1``: a record written before ``schema_version`` (and, in
    results, before ``protocol``, ``metric_selection`` and ``slices``) gets them: its run was
    open loop, selected nothing by rule and sliced nothing. The keys are placed where version 1
    writes them."""
    if kind == "manifest":
        return {"schema_version": RUN_FORMAT_VERSION, **document}
    order = ("schema_version", "run_id", "config_hash", "benchmark", "model", "protocol", "metrics",
             "metric_selection", "results", "slices", "scorecard", "evidence")
    filled = {"schema_version": RUN_FORMAT_VERSION, "protocol": ProtocolInfo().to_dict(), "metric_selection": {},
              "slices": {}, **{k: v for k, v in document.items() if k != "schema_version"}}
    return {**{k: filled[k] for k in order if k in filled}, **{k: v for k, v in filled.items() if k not in order}}


MIGRATIONS: dict[str, Callable[[dict[str, Any], str], dict[str, Any]]] = {UNVERSIONED: migrate_0_to_1}
"""Version → the function that lifts a record of that version to the next."""


def migrate(document: Mapping[str, Any], kind: str, where: Any = "") -> dict[str, Any]:
    """``document`` (``kind``: ``manifest`` or ``results``) lifted to :data:`RUN_FORMAT_VERSION`."""
    data = dict(document)
    for _ in range(len(MIGRATIONS) + 1):
        version = data.get("schema_version", UNVERSIONED)
        if version == RUN_FORMAT_VERSION:
            return data
        step = MIGRATIONS.get(version) if isinstance(version, str) else None
        if step is None:
            raise RunRecordError(f"{where}: {kind} format {version!r} is not one this wfeval reads "
                                 f"(it reads {', '.join([*MIGRATIONS, RUN_FORMAT_VERSION])})")
        data = step(data, kind)
    raise RunRecordError(f"{where}: the {kind} migrations do not reach {RUN_FORMAT_VERSION}")


@dataclass
class RunRecord:
    """A run folder's record: its manifest (None in a folder without one: ``results.json`` alone)
    and its results (None for a run that ended without them: a failed run)."""

    folder: Path
    manifest: RunManifest | None = None
    results: RunResults | None = None

    @property
    def protocol(self) -> ProtocolInfo:
        """The run's protocol: the results' where it has them, else the manifest's (else open loop)."""
        if self.results is not None:
            return self.results.protocol
        return self.manifest.protocol_info if self.manifest is not None else ProtocolInfo()

    @property
    def run_id(self) -> str:
        return str((self.manifest.run_id if self.manifest is not None else "")
                   or (self.results.run_id if self.results is not None else "") or self.folder.name)

    @property
    def model_name(self) -> str:
        for model in (self.manifest.model if self.manifest else None, self.results.model if self.results else None):
            if model is not None and model.name:
                return str(model.name)
        return "?"

    @property
    def benchmark_id(self) -> str:
        for bench in (self.manifest.benchmark if self.manifest else None,
                      self.results.benchmark if self.results else None):
            if bench is not None and bench.id:
                return str(bench.id)
        return ""

    @property
    def status(self) -> str:
        """The manifest's status (``completed``, ``failed``, ...), ``missing`` without a manifest."""
        return str(self.manifest.status or "unknown") if self.manifest is not None else "missing"


def _read_object(path: Path, kind: str) -> dict[str, Any] | None:
    if not path.is_file():
        return None
    data = json.loads(path.read_text(encoding="utf-8"))
    if not isinstance(data, dict):
        raise RunRecordError(f"{path}: not a JSON object")
    return migrate(data, kind, path)


def read_manifest(folder: str | Path) -> RunManifest | None:
    """The run's ``manifest.json`` (migrated to the current version), None where it has none."""
    data = _read_object(Path(folder) / FILES.manifest, "manifest")
    return None if data is None else RunManifest.from_dict(data)


def read_results(path: str | Path) -> RunResults | None:
    """The run's ``results.json`` (``path``: the run folder or the file), None where it has none."""
    path = Path(path)
    data = _read_object(path if path.name == FILES.results and path.is_file() else path / FILES.results, "results")
    return None if data is None else RunResults.from_dict(data)


def read_run_record(folder: str | Path) -> RunRecord:
    """A run folder's manifest and results, each None where the file is absent."""
    folder = Path(folder)
    return RunRecord(folder, read_manifest(folder), read_results(folder))


def write_manifest(folder: str | Path | RunDirectory, manifest: RunManifest) -> None:
    _directory(folder).write_json(FILES.manifest, manifest.to_dict())


def write_results(folder: str | Path | RunDirectory, results: RunResults) -> None:
    _directory(folder).write_json(FILES.results, results.to_dict())


def write_run_record(folder: str | Path | RunDirectory, record: RunRecord) -> None:
    """Write the record's manifest and results (each replaced atomically; an absent one left as is)."""
    if record.manifest is not None:
        write_manifest(folder, record.manifest)
    if record.results is not None:
        write_results(folder, record.results)


def _directory(folder: str | Path | RunDirectory) -> RunDirectory:
    return folder if isinstance(folder, RunDirectory) else RunDirectory(folder, create=False)

