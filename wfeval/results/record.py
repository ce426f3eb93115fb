"""A run folder's record as data: ``manifest.json`` and ``results.json`` as typed, versioned dataclasses.

One pair reads and writes them (:func:`read_run_record` / :func:`write_run_record`, and
:func:`write_manifest` / :func:`write_results` for one file); nothing else parses a run folder's
JSON. Every block keeps the keys it was read with, in their order (``to_dict`` gives back what
``from_dict`` was given, byte for byte once written), and what the format leaves out has its
default here, once: a run without a ``protocol`` ran open loop.

Versions: a folder written before ``schema_version`` existed (``wfeval.run/0``: no
``schema_version``, no ``protocol``, ``metric_selection`` or ``slices`` in its results) is read
through :func:`migrate_0_to_1`; :data:`MIGRATIONS` names one function per version, applied in
turn until the document is at :data:`RUN_FORMAT_VERSION`. A version this code does not know is
refused (:class:`RunRecordError`), never guessed.
"""

from __future__ import annotations

import dataclasses
import json
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable, ClassVar, Iterator, Mapping

from wfeval.storage.rundir import FILES, RUN_FORMAT_VERSION, RunDirectory

OPEN_LOOP = "open_loop"
"""The protocol of a run whose record names none (the default task's)."""
UNVERSIONED = "wfeval.run/0"
"""What a record without ``schema_version`` is read as."""


class RunRecordError(ValueError):
    """A run folder's JSON that is not a run record this code can read (the path and why)."""


# ---------------------------------------------------------------------------------------------
# blocks: typed fields, unknown keys kept, key order kept


@dataclass
class Block:
    """A JSON object with typed fields. ``extra`` holds the keys no field names; the order the
    keys were read in is kept, so that a block written back is the one read. A block built in
    code writes its fields in declaration order, leaving out optional ones that are None."""

    _nested: ClassVar[Mapping[str, type["Block"]]] = {}  # key -> block type
    _mapped: ClassVar[Mapping[str, type["Block"]]] = {}  # key -> block type of each value
    _mapped2: ClassVar[Mapping[str, type["Block"]]] = {}  # key -> block type of each value's values
    _always: ClassVar[tuple[str, ...]] = ()  # written even when None

    extra: dict[str, Any] = field(default_factory=dict, repr=False, kw_only=True)
    _keys: tuple[str, ...] | None = field(default=None, repr=False, compare=False, kw_only=True)

    @classmethod
    def field_names(cls) -> tuple[str, ...]:
        return tuple(f.name for f in dataclasses.fields(cls) if not f.name.startswith("_") and f.name != "extra")

    @classmethod
    def from_dict(cls, data: Mapping[str, Any] | None):  # type: ignore[no-untyped-def]
        """The block of a JSON object (None or a non-object: an empty block)."""
        data = data if isinstance(data, Mapping) else {}
        names = set(cls.field_names())
        values: dict[str, Any] = {}
        for key, value in data.items():
            if key not in names:
                continue
            if key in cls._nested and isinstance(value, Mapping):
                value = cls._nested[key].from_dict(value)
            elif key in cls._mapped and isinstance(value, Mapping):
                value = {k: cls._mapped[key].from_dict(v) if isinstance(v, Mapping) else v for k, v in value.items()}
            elif key in cls._mapped2 and isinstance(value, Mapping):
                inner = cls._mapped2[key]
                value = {k: {g: inner.from_dict(r) if isinstance(r, Mapping) else r for g, r in v.items()}
                         if isinstance(v, Mapping) else v for k, v in value.items()}
            values[key] = value
        extra = {k: v for k, v in data.items() if k not in names}
        return cls(**values, extra=extra, _keys=tuple(data))

    def to_dict(self) -> dict[str, Any]:
        """The JSON object: the keys read, in their order, then fields set since (None left out)."""
        names = self.field_names()
        order = list(self._keys) if self._keys is not None else []
        order += [n for n in names if n not in order and (getattr(self, n) is not None or n in self._always)]
        order += [k for k in self.extra if k not in order]
        out: dict[str, Any] = {}
        for key in order:
            if key in names:
                out[key] = _plain(getattr(self, key))
            elif key in self.extra:
                out[key] = self.extra[key]
        return out


def _plain(value: Any) -> Any:
    if isinstance(value, Block):
        return value.to_dict()
    if isinstance(value, dict):
        return {k: _plain(v) for k, v in value.items()}
    if hasattr(value, "to_dict") and callable(value.to_dict):
        return value.to_dict()
    return value


# ---------------------------------------------------------------------------------------------
# the blocks both files share


@dataclass
class ProtocolInfo(Block):
    """How the samples were generated (``protocol``); a record without one ran open loop."""

    name: str = OPEN_LOOP
    driver: str = OPEN_LOOP
    chunk: Any = None
    policy: Any = None
    planner: Any = None

    _always = ("name", "driver")

    @property
    def label(self) -> str:
        """The protocol with its policy (``closed_loop(random)``) or planner method: results of
        different protocols measure different things and are never ranked together."""
        label = str(self.name or OPEN_LOOP)
        policy = self.policy
        if isinstance(policy, dict) and policy.get("_target_"):
            short = str(policy["_target_"]).rsplit(".", 1)[-1].removesuffix("Policy").lower() or "policy"
            label += f"({short})"
        planner = self.planner
        if isinstance(planner, dict) and planner.get("method"):
            label += f"({planner['method']})"
        return label


@dataclass
class BenchmarkInfo(Block):
    """What was evaluated: the benchmark's id, version, samples and their content hash."""

    id: str | None = None
    name: str | None = None
    version: Any = None
    fingerprint: Any = None
    n_samples: int | None = None
    dataset_hash: str | None = None
    metrics: list[str] | None = None
    runtime: dict[str, Any] | None = None


@dataclass
class ModelInfo(Block):
    """The model: its name, version and cache key (``key``)."""

    name: str | None = None
    version: Any = None
    key: str | None = None
    target: str | None = None


@dataclass
class ManifestMetric(Block):
    """A metric as the manifest records it: version, class and identity (the resume check)."""

    version: Any = None
    identity: str | None = None

    @property
    def metric_class(self) -> str | None:
        """The metric's class (the key ``class``, which no field can be named)."""
        return self.extra.get("class")


# ---------------------------------------------------------------------------------------------
# results.json


@dataclass
class Aggregate(Block):
    """One measurement's aggregate (``results`` and ``slices`` rows: ``AggregateResult.to_dict()``)."""

    metric_id: str | None = None
    n_total: int = 0
    n_valid: int = 0
    n_skipped: int = 0
    raw_stats: dict[str, Any] | None = None
    normalized_stats: dict[str, Any] | None = None
    confidence_interval: dict[str, Any] | None = None
    stderr: float | None = None
    skip_breakdown: dict[str, int] | None = None
    valid: bool = False
    diagnostics: dict[str, Any] | None = None
    schema_version: str | None = None

    @property
    def value(self) -> float | None:
        """The headline number (None when the aggregate is invalid): the aggregator's value, else
        the mean of the normalized values (:func:`wfeval.results.aggregation.headline`)."""
        if not self.valid:
            return None
        value = (self.diagnostics or {}).get("value")
        return value if value is not None else (self.normalized_stats or {}).get("mean")

    @property
    def ci_low(self) -> float | None:
        return (self.confidence_interval or {}).get("low")

    @property
    def ci_high(self) -> float | None:
        return (self.confidence_interval or {}).get("high")

    @property
    def ci_method(self) -> str | None:
        return (self.confidence_interval or {}).get("method")

    @property
    def coverage(self) -> float | None:
        """n_valid / n_total (None for an empty aggregate): the share of samples the value rests on."""
        return self.n_valid / self.n_total if self.n_total else None

    @property
    def reason(self) -> str | None:
        """Why an invalid aggregate has no value (``diagnostics.reason``)."""
        return (self.diagnostics or {}).get("reason")


@dataclass
class MeasurementInfo(Block):
    """What a reader needs to show one measurement: version, direction, unit, bounds, family."""

    version: Any = None
    higher_is_better: bool | None = None
    selected_by: str | None = None
    unit: str | None = None
    bounds: list[float | None] | None = None
    family: str | None = None


@dataclass
class ScorecardComponent(Block):
    value: float | None = None
    normalized: float | None = None
    weight: float | None = None
    missing: bool | None = None
    normalizer: str | None = None
    higher_is_better: bool | None = None


@dataclass
class Scorecard(Block):
    """The overall score from the benchmark's declared components (None when one is missing)."""

    _mapped = {"components": ScorecardComponent}

    primary: str | None = None
    score: float | None = None
    partial_score: float | None = None
    missing: list[str] = field(default_factory=list)
    components: dict[str, ScorecardComponent] = field(default_factory=dict)


@dataclass
class Evidence(Block):
    """The evidence gate's verdict: eligible, the reasons it is not, the rules it applied."""

    eligible: bool | None = None
    reasons: list[str] = field(default_factory=list)
    rules: dict[str, Any] = field(default_factory=dict)
    missing_metrics: list[str] | None = None


@dataclass
class RunResults(Block):
    """``results.json``: the aggregates of a run keyed ``<benchmark_id>.<metric_id>``, their
    slices, the scorecard and the evidence verdict."""

    _nested = {"benchmark": BenchmarkInfo, "model": ModelInfo, "protocol": ProtocolInfo,
               "scorecard": Scorecard, "evidence": Evidence}
    _mapped = {"metrics": MeasurementInfo, "results": Aggregate}
    _mapped2 = {"slices": Aggregate}

    schema_version: str = RUN_FORMAT_VERSION
    run_id: str = ""
    config_hash: str | None = None
    benchmark: BenchmarkInfo = field(default_factory=BenchmarkInfo)
    model: ModelInfo = field(default_factory=ModelInfo)
    protocol: ProtocolInfo = field(default_factory=ProtocolInfo)
    metrics: dict[str, MeasurementInfo] = field(default_factory=dict)
    metric_selection: dict[str, str] = field(default_factory=dict)
    results: dict[str, Aggregate] = field(default_factory=dict)
    slices: dict[str, dict[str, Aggregate]] = field(default_factory=dict)
    scorecard: Scorecard = field(default_factory=Scorecard)
    evidence: Evidence = field(default_factory=Evidence)

    def info(self, measurement: str) -> MeasurementInfo:
        """What the run records about ``measurement`` (an empty block for one it does not)."""
        return self.metrics.get(measurement) or MeasurementInfo()

    @property
    def model_name(self) -> str:
        return str(self.model.name or "?")

    @property
    def benchmark_id(self) -> str:
        return str(self.benchmark.id or "")


# ---------------------------------------------------------------------------------------------
# manifest.json


@dataclass
class RunManifest(Block):
    """``manifest.json``: what the run is (config hash, versions, seeds, benchmark, model,
    metrics, protocol) and where it stands (``status``)."""

    _nested = {"benchmark": BenchmarkInfo, "model": ModelInfo, "protocol": ProtocolInfo}
    _mapped = {"metrics": ManifestMetric}
    _always = ("schema_version", "run_id")

    schema_version: str = RUN_FORMAT_VERSION
    run_id: str = ""
    status: str | None = None
    started_at: str | None = None
    finished_at: str | None = None
    config_hash: str | None = None
    config_file: str | None = None
    argv: list[str] | None = None
    cwd: str | None = None
    host: str | None = None
    pid: int | None = None
    seeds: dict[str, Any] | None = None
    versions: dict[str, Any] | None = None
    store_dir: str | None = None
    resumed: bool | None = None
    shard: Any = None
    source_run: str | None = None
    protocol: ProtocolInfo | None = None
    metric_selection: dict[str, str] | None = None
    benchmark: BenchmarkInfo | None = None
    rules: dict[str, Any] | None = None
    model: ModelInfo | None = None
    metrics: dict[str, ManifestMetric] | None = None
    merged_from: list[str] | None = None
    error: str | None = None
    signal: str | None = None
    failure_kind: str | None = None

    @property
    def protocol_info(self) -> ProtocolInfo:
        """The protocol, open loop where the manifest names none."""
        return self.protocol if self.protocol is not None else ProtocolInfo()

    @property
    def benchmark_info(self) -> BenchmarkInfo:
        return self.benchmark if self.benchmark is not None else BenchmarkInfo()

    @property
    def model_info(self) -> ModelInfo:
        return self.model if self.model is not None else ModelInfo()

    @property
    def required_metrics(self) -> tuple[str, ...]:
        """The metric ids the benchmark names (its evidence needs all of them)."""
        return tuple(self.benchmark_info.metrics or ())


# ---------------------------------------------------------------------------------------------
# versions


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
        step = MIGRATIONS.get(version)
        if step is None:
            raise RunRecordError(f"{where}: {kind} format {version!r} is not one this wfeval reads "
                                 f"(it reads {', '.join([*MIGRATIONS, RUN_FORMAT_VERSION])})")
        data = step(data, kind)
    raise RunRecordError(f"{where}: the {kind} migrations do not reach {RUN_FORMAT_VERSION}")


# ---------------------------------------------------------------------------------------------
# the one read/write pair


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

