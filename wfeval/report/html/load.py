"""Read run folders as data: JSON and JSONL files only, never a ``_target_`` built from them.

A run folder is what the pipeline wrote (``docs/run-directory.md``). Every file is optional
except ``manifest.json``: a failed run has no ``results.json`` and is still shown (with its
error). A torn last JSONL line (a killed run) is ignored, as the pipeline's own readers do.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import TYPE_CHECKING, Any, Iterable, Iterator, Mapping

from wfeval.api import ArtifactRef
from wfeval.report.html.digest import Generations, Samples, Steps, read_metrics
from wfeval.report.runs import read_hydra
from wfeval.results.record import RunManifest, RunResults, read_run_record
from wfeval.storage import rundir
from wfeval.storage.rundir import FILES

if TYPE_CHECKING:
    from wfeval.report.runs import Entry


def read_jsonl(path: Path) -> Iterator[dict[str, Any]]:
    """The object rows of a run file (torn lines skipped by :func:`wfeval.storage.rundir.read_jsonl`)."""
    if path.is_file():
        yield from (row for row in rundir.read_jsonl(path) if isinstance(row, dict))


class FileRows:
    """The object rows of a run file, read from the start at each iteration (nothing kept).

    Every reading after the first stops at the lines the first one saw (less a last line it
    could not parse: a row being written): a run that appends rows while its report is read
    (a resumed run, a peek at a running one) is read as it was, the same rows in every reading.
    """

    def __init__(self, path: Path):
        self.path = path
        self.lines: int | None = None

    def __iter__(self) -> Iterator[dict[str, Any]]:
        limit, seen, parsed = self.lines, 0, True
        if not self.path.is_file():
            self.lines = 0 if limit is None else limit
            return
        with self.path.open(encoding="utf-8") as handle:
            for index, line in enumerate(handle):
                if limit is not None and index >= limit:
                    break
                seen, line = index + 1, line.strip()
                if not line:
                    continue
                try:  # a torn line (a killed or still writing writer) is skipped, as rundir.read_jsonl does
                    row, parsed = json.loads(line), True
                except json.JSONDecodeError:
                    parsed = False
                    continue
                if isinstance(row, dict):
                    yield row
        if limit is None:
            self.lines = seen if parsed else seen - 1


def _rows(source: Iterable | Mapping | None, nested: bool = False) -> Iterable[dict[str, Any]]:
    """Rows to read (again): a file's, a list's, or a mapping's values (sample → row; ``nested``:
    metric → sample → row): rows already in memory, e.g. a test's."""
    if source is None:
        return ()
    if isinstance(source, Mapping):
        return [row for value in source.values() for row in (value.values() if nested else [value])]
    return source


class RunData:
    """What the report shows about one run, read from its folder (:func:`load_run`) as streams.

    It keeps the manifest and results, and of the row files only what the page shows or sorts
    (:mod:`.digest`): memory grows by about 40 bytes a sample per metric and 16 per timed step
    row, not with the rows. The rows may also be given in memory (lists, or the mappings the
    report once kept: ``metric_rows`` metric → sample → row).
    """

    def __init__(self, path: Path, manifest: RunManifest | Mapping[str, Any],
                 results: RunResults | Mapping[str, Any] | None,
                 samples: Iterable | None = None, metric_rows: Iterable | Mapping | None = None,
                 generations: Iterable | Mapping | None = None, steps: Iterable | None = None,
                 overrides: list[str] | None = None, label: str = "", task: str | None = None):
        self.path = Path(path)
        self.manifest = manifest if isinstance(manifest, RunManifest) else RunManifest.from_dict(manifest)
        self.results = results if results is None or isinstance(results, RunResults) else RunResults.from_dict(results)
        self.overrides, self.label, self.task = overrides, label, task
        self.color = "#1f77b4"  # the run's row colour on the page (set with the leaderboard)
        self.samples = Samples(_rows(samples))
        self.metrics, self.horizons = read_metrics(_rows(metric_rows, nested=True))
        self._generations = _rows(generations)
        self.generations = None if self.samples.has_rows else Generations(self._generations)
        self.steps = Steps(_rows(steps))
        self._wanted: set[str] = set()  # records a later call will ask for (read with the first)
        self._records: dict[str, dict[str, Any] | None] = {}  # read so far (None: no record)

    def want_records(self, sample_ids: Iterable[str]) -> None:
        """Records :meth:`generation_records` will be asked for later: read in the same pass as the
        next call's, so that ``generations.jsonl`` is not read once per section of the page."""
        self._wanted.update(str(s) for s in sample_ids)

    def generation_records(self, sample_ids: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The ``generations.jsonl`` record (the last one) of each of ``sample_ids`` that has one."""
        asked = {str(s) for s in sample_ids}
        missing = asked - self._records.keys()
        if missing:
            wanted = missing | (self._wanted - self._records.keys())
            found: dict[str, dict[str, Any]] = {}
            for record in self._generations:
                sample = rundir.request_sample_id(record)
                if sample and str(sample) in wanted:
                    found[str(sample)] = record
            self._records.update({s: found.get(s) for s in wanted})
        return {s: self._records[s] for s in asked if self._records.get(s) is not None}  # type: ignore[misc]

    @property
    def run_id(self) -> str:
        return str(self.manifest.run_id or self.path.name)

    @property
    def model_name(self) -> str:
        return str(self.manifest.model_info.name or (self.results.model.name if self.results is not None else None)
                   or "?")

    @property
    def benchmark_id(self) -> str:
        return str(self.manifest.benchmark_info.id or "")

    @property
    def status(self) -> str:
        return str(self.manifest.status or "unknown")

    def entry(self) -> "Entry":
        """The run as the leaderboard sees it (:class:`~wfeval.report.runs.Entry`), this object attached."""
        from wfeval.report.runs import Entry

        if self.results is not None:
            entry = Entry.of_document(self.results, self.path, overrides=self.overrides, task=self.task)
        else:  # a run that ended without results: its manifest says what it was
            entry = Entry(None, self.path, overrides=self.overrides, task=self.task, model_name=self.model_name,
                          benchmark=self.benchmark_id, protocol=self.manifest.protocol_info.label, run_id=self.run_id)
        entry.status, entry.error = self.status, self.manifest.error
        entry.extra["run"] = self
        return entry

    def store_dir(self) -> Path | None:
        store = self.manifest.store_dir
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
    record = read_run_record(path)
    if record.manifest is None:
        raise FileNotFoundError(f"{path}: no manifest.json (not a wfeval run folder)")
    overrides, task = read_hydra(path)
    return RunData(path, record.manifest, record.results, samples=FileRows(path / FILES.samples),
                   metric_rows=FileRows(path / FILES.metrics), generations=FileRows(path / FILES.generations),
                   steps=FileRows(path / FILES.steps), overrides=overrides, task=task)


def find_runs(paths: Iterable[str | Path]) -> list[Path]:
    """The run folders given, or every run folder below a sweep / outputs folder (sorted)."""
    found: list[Path] = []
    for path in map(Path, paths):
        if path.is_file() and path.name in (FILES.manifest, FILES.results):
            path = path.parent
        if (path / FILES.manifest).is_file():
            found.append(path)
        elif path.is_dir():
            found.extend(p.parent for p in sorted(path.rglob(FILES.manifest)))
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
