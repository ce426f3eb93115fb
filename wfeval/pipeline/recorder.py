"""The run recorder: the one writer of a run's ``manifest.json`` and ``events.jsonl``.

The manifest says what the run is (config hash, versions, seeds, benchmark, model, metrics) and
where it stands (``running`` → ``completed`` / ``failed`` / ``interrupted``). Each ``record_*``
method changes one part and writes the file once; events are appended as they happen.
"""

from __future__ import annotations

import contextlib
import functools
import os
import platform
import sys
import traceback
from importlib import metadata as importlib_metadata
from pathlib import Path
from typing import Any, Iterator, Mapping

import wfeval
from wfeval.config.errors import ConfigError
from wfeval.config.run_config import CONFIG_HASH_RUN_KEYS
from wfeval.results.record import BenchmarkInfo, ModelInfo, ProtocolInfo, RunManifest, read_manifest, write_manifest
from wfeval.storage.rundir import FILES, RUN_FORMAT_VERSION, RunDirectory, utc_now
from wfeval.utils.hashing import sha256_json

KEY_PACKAGES = ("hydra-core", "omegaconf", "numpy", "scipy", "torch", "av")


def package_versions() -> dict[str, str | None]:
    """Versions of key packages, read from metadata once per process (nothing heavy is imported;
    what a process runs is what it imported: a later upgrade on disk does not change it)."""
    return dict(_package_versions())


@functools.lru_cache(maxsize=1)
def _package_versions() -> tuple[tuple[str, str | None], ...]:
    out: dict[str, str | None] = {"wfeval": wfeval.__version__, "python": platform.python_version()}
    for name in KEY_PACKAGES:
        try:
            out[name] = importlib_metadata.version(name)
        except importlib_metadata.PackageNotFoundError:
            out[name] = None
    return tuple(out.items())


def seeds_of(node: Any, prefix: str = "") -> dict[str, Any]:
    """Every ``seed`` key of the resolved config, by its full key (``benchmark.seed``, ...)."""
    found: dict[str, Any] = {}
    if isinstance(node, dict):
        for key, value in node.items():
            path = f"{prefix}{key}"
            if key == "seed" and not isinstance(value, (dict, list)):
                found[path] = value
            else:
                found.update(seeds_of(value, path + "."))
    return found


def config_hash(plain_cfg: Mapping[str, Any]) -> str:
    """Identity of a run's config; of the run options only those that change its results count
    (``run.shard`` is left out on purpose: every shard of a run shares the run's config hash)."""
    identity = {k: v for k, v in plain_cfg.items() if k != "run"}
    identity["run"] = {k: v for k, v in plain_cfg.get("run", {}).items() if k in CONFIG_HASH_RUN_KEYS}
    return sha256_json(identity)


class RunRecorder:
    def __init__(self, rundir: RunDirectory, manifest: RunManifest, previous: RunManifest | None):
        self.rundir = rundir
        self._manifest = manifest
        self.previous = previous

    @classmethod
    def open(cls, output_dir: str | os.PathLike[str], *, plain_cfg: Mapping[str, Any], store_dir: Path,
             shard: str | None) -> "RunRecorder":
        """Start (or resume, in a folder holding a run of the same config) and record it."""
        rundir = RunDirectory(output_dir)
        chash = config_hash(plain_cfg)
        previous = read_manifest(rundir.path)
        if previous is not None and previous.config_hash != chash:
            raise ConfigError(f"{rundir.path} holds a run of another config (hash {previous.config_hash}); "
                              "resume it with its own overrides or use a new directory")
        manifest = RunManifest.from_dict({
            "schema_version": RUN_FORMAT_VERSION,
            "run_id": rundir.path.name,
            "status": "running",
            "started_at": (previous.started_at if previous is not None else None) or utc_now(),
            "finished_at": None,
            "config_hash": chash,
            "config_file": FILES.config,
            "argv": sys.argv,
            "cwd": os.getcwd(),
            "host": platform.node(),
            "pid": os.getpid(),
            "seeds": seeds_of(dict(plain_cfg)),
            "versions": package_versions(),
            "store_dir": str(store_dir),
            "resumed": previous is not None,
            "shard": shard,
        })
        recorder = cls(rundir, manifest, previous)
        recorder._write()
        recorder.event("run_resumed" if previous is not None else "run_started", config_hash=chash)
        return recorder

    @property
    def manifest(self) -> RunManifest:
        return self._manifest

    @property
    def path(self) -> Path:
        return self.rundir.path

    def _write(self) -> None:
        write_manifest(self.rundir, self._manifest)

    def event(self, kind: str, **fields: Any) -> None:
        self.rundir.event(kind, **fields)

    def step(self, row: Mapping[str, Any]) -> None:
        self.rundir.append(FILES.steps, row)

    def record_plan(self, *, benchmark: Mapping[str, Any], model: Mapping[str, Any], rules: Mapping[str, Any],
                    metrics: Mapping[str, Any], source_run: str | None = None,
                    protocol: Mapping[str, Any] | None = None, metric_selection: Mapping[str, str] | None = None) -> None:
        """What is evaluated: the benchmark (samples, dataset hash), the model, the rules, the metrics,
        the protocol it was generated under."""
        manifest = self._manifest
        if source_run is not None:
            manifest.source_run = source_run
        if protocol is not None:
            manifest.protocol = ProtocolInfo.from_dict(protocol)
        if metric_selection is not None:
            manifest.metric_selection = dict(metric_selection)
        manifest.benchmark, manifest.rules = BenchmarkInfo.from_dict(benchmark), dict(rules)
        manifest.model, manifest.metrics = ModelInfo.from_dict(model), RunManifest.from_dict({"metrics": metrics}).metrics
        self._write()

    def record_model(self, entry: Mapping[str, Any]) -> None:
        """The model's identity as it stands after its ``setup()`` (which may load weights)."""
        self._manifest.model = ModelInfo.from_dict({**self._manifest.model_info.to_dict(), **dict(entry)})
        self._write()

    def record_runtime(self, info: Mapping[str, Any] | None) -> None:
        """What the benchmark's runtime hook reports (how the data was obtained: timings, caches)."""
        if info:
            benchmark = self._manifest.benchmark_info
            benchmark.runtime = {**(benchmark.runtime or {}), **info}
            self._manifest.benchmark = benchmark
            self._write()

    def _finish(self, status: str, **fields: Any) -> None:
        self._manifest.status, self._manifest.finished_at = status, utc_now()
        for key, value in fields.items():
            if key in RunManifest.field_names():
                setattr(self._manifest, key, value)
            else:
                self._manifest.extra[key] = value
        self._write()

    @contextlib.contextmanager
    def running(self) -> Iterator["RunRecorder"]:
        """Record ``failed`` (or ``interrupted``) with the reason if the block raises
        (:func:`wfeval.pipeline.failure.run_end` says what; docs/reliability.md lists the cases);
        a storage ``OSError`` leaves as a :class:`~wfeval.pipeline.failure.StorageError`."""
        from wfeval.pipeline.failure import run_end, signals_held, storage_error

        try:
            yield self
        except BaseException as exc:
            status, fields, kind, event = run_end(exc, self.path)
            if kind == "run_failed" and not isinstance(exc, (OSError, ConfigError)):
                event["traceback"] = "".join(traceback.format_exception(type(exc), exc, exc.__traceback__))
            try:  # a full disk may refuse these too: the exception that got us here is what matters
                with signals_held():  # a second Ctrl-C must not leave the manifest at "running"
                    self._finish(status, **fields)
                    self.event(kind, **event)
            except OSError:
                pass
            if isinstance(exc, OSError):
                raise storage_error(exc, "storage error:") from None
            raise

    def complete(self, **fields: Any) -> None:
        self._finish("completed")
        self.event("run_finished", **fields)
