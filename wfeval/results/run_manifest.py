"""``manifest.json`` as data: :class:`RunManifest` (what a run is and where it stands). Read and
written by :mod:`wfeval.results.record`; the run's recorder is its one writer."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from wfeval.results.blocks import BenchmarkInfo, Block, ManifestMetric, ModelInfo, ProtocolInfo
from wfeval.storage.rundir import RUN_FORMAT_VERSION


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
