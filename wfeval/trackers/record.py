"""What a tracker logs about one run, read from its run folder: :class:`RunRecord`.

The numbers come from ``results.json`` only (through :func:`wfeval.report.rows.rows`, the rows
``export`` and ``compare`` use), so a tracker shows exactly what the run folder says: per
measurement ``<id>`` (``<benchmark>.<metric>``) ``<id>/value``, ``<id>/ci_low``, ``<id>/ci_high``,
``<id>/n_valid``, ``<id>/n_total``, ``<id>/n_skipped``, ``<id>/coverage`` (one section per
measurement in TensorBoard and W&B, one folder in MLflow's store), and where a measurement has them
(the probes, ``idm_accuracy``) ``<id>/chance``, ``<id>/ceiling``, ``<id>/effective_rank``,
``<id>/off_range`` and ``<id>/variable/<name>`` (wfeval/report/probes.py); plus ``score`` (the
scorecard's) and ``eligible`` (1 or 0). An invalid measurement has no ``value`` (never a 0).

Where the run has them, per-variable and per-horizon results too (:func:`breakdown`, means over the
valid samples of ``metrics.jsonl``): ``<id>/variable/<name>`` for a probing measurement (``probe_r2``,
``probe_accuracy``, ``imagined_probe_r2_k<k>``, itself one measurement per horizon k), which scores
each state variable; ``<id>/horizon/<frame>`` for a measurement whose rows keep a per-frame curve.

:attr:`RunRecord.params`: the handful of ``wfeval.*`` parameters a tracker logs into a run that is
not wfeval's own (the caller's training run), at most :data:`MAX_PARAMS`; the whole config goes
with them as one artifact.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Mapping

from wfeval.report.probes import level_values
from wfeval.report.rows import rows
from wfeval.results.record import RunResults, read_manifest, read_results
from wfeval.storage.rundir import FILES

COUNT_FIELDS = ("ci_low", "ci_high", "n_valid", "n_total", "n_skipped", "coverage")
#: the run folder's files a tracker attaches, when present (the report and what it rests on)
ARTIFACTS = (FILES.results, FILES.results_md, FILES.report, FILES.manifest, FILES.config,
             FILES.overrides)
DEFAULT_EXPERIMENT = "wfeval"
MAX_PARAMS = 20  # what wfeval may add to a run that is not its own
PER_VARIABLE_FAMILIES = ("probing",)  # measurements whose sample components are one score per state variable


@dataclass
class RunRecord:
    run_dir: Path
    name: str  # the run folder's name (a sweep job: "<num>_<model>")
    experiment: str  # "wfeval", or "wfeval-sweep-<sweep folder>" for the jobs of one sweep
    sweep: str | None
    status: str  # manifest.json's status (completed, failed, interrupted), "missing" without one
    error: str | None
    config: dict[str, Any]
    overrides: list[str]
    tags: dict[str, str]
    metrics: dict[str, float]  # flat key -> value, see the module docstring
    measurements: list[dict[str, Any]] = field(default_factory=list)  # the export rows
    params: dict[str, str] = field(default_factory=dict)  # wfeval.* parameters: what ran (summary_params)
    artifacts: list[Path] = field(default_factory=list)

    @property
    def completed(self) -> bool:
        return self.status == "completed"


def measurement_values(document: RunResults) -> dict[str, float]:
    """Flat numbers of a run's results: each measurement's value, interval and counts."""
    out: dict[str, float] = {}
    for row in rows(document):
        key = row["measurement"]
        if isinstance(row["value"], (int, float)) and not isinstance(row["value"], bool):
            out[f"{key}/value"] = float(row["value"])
        for name in COUNT_FIELDS:
            if isinstance(row[name], (int, float)) and not isinstance(row[name], bool):
                out[f"{key}/{name}"] = float(row[name])
        for name, value in level_values(document.results[key].diagnostics).items():  # chance, ceiling, …
            out[f"{key}/{name}"] = value
    score = document.scorecard.score
    if isinstance(score, (int, float)):
        out["score"] = float(score)
    eligible = document.evidence.eligible
    if isinstance(eligible, bool):
        out["eligible"] = 1.0 if eligible else 0.0
    return out


def breakdown(document: RunResults, run_dir: Path) -> dict[str, float]:
    """Per-variable and per-horizon results, read from ``metrics.jsonl`` (the last row of a sample
    wins, as everywhere), each a mean over the valid samples: ``<id>/variable/<name>`` for a probing
    measurement (its components score each state variable), ``<id>/horizon/<x>`` for a measurement
    whose rows keep a curve of its own value (PSNR's per frame, flicker's per step: the report's x,
    :data:`wfeval.report.html.curves.OWN_CURVES`)."""
    from wfeval.report.html.curves import CURVE_KEYS, OWN_CURVES
    from wfeval.storage.rundir import read_jsonl

    prefix = f"{document.benchmark.id}."
    wanted = {m[len(prefix):]: m for m in document.results if m.startswith(prefix)}
    if not wanted or not (run_dir / FILES.metrics).is_file():
        return {}
    last: dict[tuple[str, str], dict[str, Any]] = {}
    for row in read_jsonl(run_dir / FILES.metrics):
        if row.get("metric_id") in wanted and isinstance(row.get("sample_id"), str):
            last[(row["metric_id"], row["sample_id"])] = row
    values: dict[str, list[float]] = {}
    for (metric, _), row in last.items():
        components = row.get("components") or {}
        if (row.get("diagnostics") or {}).get("status") != "ok" or not isinstance(components, dict):
            continue
        key = wanted[metric]
        if document.info(key).family in PER_VARIABLE_FAMILIES:
            for name, value in components.items():
                if name != "chance" and _number(value):
                    values.setdefault(f"{key}/variable/{name}", []).append(float(value))
        curve = next(((x_of, components[name]) for name, x_of, _ in CURVE_KEYS
                      if name in OWN_CURVES and isinstance(components.get(name), list)), None)
        for i, value in enumerate(curve[1] if curve else ()):
            if _number(value):
                values.setdefault(f"{key}/horizon/{curve[0](components, i)}", []).append(float(value))
    return {key: sum(v) / len(v) for key, v in sorted(values.items())}


def _number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value)


def summary_params(document: RunResults | None, config: Mapping[str, Any]) -> dict[str, str]:
    """What ran, as at most :data:`MAX_PARAMS` ``wfeval.*`` parameters (the whole config is an artifact)."""
    from importlib import metadata

    def get(*keys: str) -> Any:
        node: Any = config
        for key in keys:
            node = node.get(key) if isinstance(node, Mapping) else None
        return node

    out = {"wfeval.task": get("task", "name"), "wfeval.num_samples": get("benchmark", "num_samples"),
           "wfeval.seed": get("run", "seed")}
    if document is not None:
        out.update({"wfeval.model": document.model.name, "wfeval.model_version": document.model.version,
                    "wfeval.benchmark": document.benchmark.id, "wfeval.protocol": document.protocol.label,
                    "wfeval.metrics": ",".join(sorted(document.results))[:500]})
    try:
        out["wfeval.version"] = metadata.version("wfeval")
    except metadata.PackageNotFoundError:
        pass
    params = {k: str(v) for k, v in out.items() if v is not None and v != ""}
    assert len(params) <= MAX_PARAMS
    return params


def sweep_experiment(sweep_dir: Path) -> str:
    return f"{DEFAULT_EXPERIMENT}-sweep-{sweep_dir.name}"


def record_of(run_dir: Path, *, config: Mapping[str, Any] | None = None, overrides: list[str] | None = None,
              sweep_dir: Path | None = None, name: str | None = None) -> RunRecord:
    """The record of a run folder (its own ``.hydra/`` files give the config when none is passed)."""
    run_dir = Path(run_dir)
    try:
        manifest = read_manifest(run_dir)
    except (OSError, ValueError):  # unreadable: the run is shown as one without a manifest
        manifest = None
    status = str(manifest.status or "missing") if manifest is not None else "missing"
    document = read_results(run_dir)
    if config is None:
        config = _yaml(run_dir / FILES.config)
    if overrides is None:
        overrides = [str(o) for o in (_yaml(run_dir / FILES.overrides) or [])]
    tags = {"wfeval.run_dir": str(run_dir.resolve()), "wfeval.status": status}
    if document is not None:
        tags.update({"wfeval.model": str(document.model.name),
                     "wfeval.benchmark": str(document.benchmark.id),
                     "wfeval.protocol": str(document.protocol.name),
                     "wfeval.config_hash": str(document.config_hash or ""),
                     "wfeval.eligible": str(document.evidence.eligible)})
    if sweep_dir is not None:
        tags["wfeval.sweep"] = str(Path(sweep_dir).resolve())
    if manifest is not None and manifest.shard:  # a shard's numbers cover part of the benchmark: say so
        shard = manifest.shard
        tags["wfeval.shard"] = shard if isinstance(shard, str) else json.dumps(shard)
    if overrides:
        tags["wfeval.overrides"] = " ".join(overrides)
    return RunRecord(
        run_dir=run_dir, name=name or run_dir.name,
        experiment=sweep_experiment(Path(sweep_dir)) if sweep_dir is not None else DEFAULT_EXPERIMENT,
        sweep=Path(sweep_dir).name if sweep_dir is not None else None,
        status=status, error=manifest.error if manifest is not None else None,
        config=dict(config or {}), overrides=list(overrides or []), tags=tags,
        metrics={**measurement_values(document), **breakdown(document, run_dir)} if document is not None else {},
        measurements=list(rows(document, run_dir)) if document is not None else [],
        params=summary_params(document, config or {}),
        artifacts=[run_dir / a for a in ARTIFACTS if (run_dir / a).is_file()],
    )


def job_config(config: Any) -> dict[str, Any]:
    """A Hydra job's config without the ``hydra`` node, resolved where it can be."""
    from omegaconf import OmegaConf

    plain = OmegaConf.to_container(config, resolve=False)
    plain.pop("hydra", None)
    node = OmegaConf.create(plain)
    try:
        return OmegaConf.to_container(node, resolve=True)
    except Exception:  # noqa: BLE001 - an interpolation only Hydra's runtime can resolve: keep it as written
        return plain


def flatten(config: Mapping[str, Any], prefix: str = "") -> dict[str, str]:
    """``{"a": {"b": 1}}`` -> ``{"a.b": "1"}`` (lists as JSON), for trackers with flat parameters."""
    out: dict[str, str] = {}
    for key, value in config.items():
        name = f"{prefix}{key}"
        if isinstance(value, Mapping) and value:
            out.update(flatten(value, f"{name}."))
        else:
            out[name] = value if isinstance(value, str) else json.dumps(value, default=str)
    return out


_UNSAFE = re.compile(r"[^A-Za-z0-9_\-. /:]")


def safe_key(key: str) -> str:
    """A key MLflow and TensorBoard accept: letters, digits, ``_ - . / : space``; others become ``_``."""
    return _UNSAFE.sub("_", key)


def _yaml(path: Path) -> Any:
    import yaml

    from wfeval.utils.yaml_data import load_yaml

    try:
        return load_yaml(path.read_text(encoding="utf-8"))
    except (OSError, yaml.YAMLError):
        return None
