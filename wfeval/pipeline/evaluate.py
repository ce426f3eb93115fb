"""``wfeval.evaluate(model=...)``: evaluate a model object from Python, e.g. inside a training loop.

    import wfeval
    results = wfeval.evaluate(model=my_model, benchmark="gridworld", metrics=["psnr", "ssim"],
                              overrides=["benchmark.num_samples=8"], model_version=step)
    results["gridworld.psnr"].value, results["gridworld.psnr"].interval, results.run_dir

The config is composed with Hydra's compose API exactly as ``python -m wfeval`` composes it
(``model=python`` with the object's class as ``model.object._target_``; every override of the
command line works), resolved once into a :class:`~wfeval.config.run_config.RunConfig` that
carries the object, and run by :func:`wfeval.pipeline.runner.run_from_config`: the same run
folder, caches, output contract and statistics, so the same numbers as the CLI. The object's
identity (what the generation cache keys on) is its class's code plus its state: every array
reachable from it hashed, its ``fingerprint()``, the ``model_version`` given (:mod:`wfeval.models.live`).

Repeated calls in one process pay only for what changed: the composed config is kept per
distinct set of arguments (copied per call), imports happen once, the benchmark's references
and decoded files come from the content-addressed store, metric rows of unchanged outputs from
the result cache; ``report=False`` (the default) skips report.html. ``tracker=``, ``step=``: each
evaluation logged at the training step into one tracker run per training run
(:mod:`wfeval.pipeline.tracking`). docs/python-api.md.
"""

from __future__ import annotations

import contextlib
import copy
import dataclasses
import re
import threading
from datetime import datetime
from pathlib import Path
from typing import Any, Iterator, Sequence

from wfeval.results.measurements import Results

_COMPOSED: dict[tuple[str, ...], Any] = {}  # composed configs by their override list (this process)
_LOCK = threading.Lock()
_SCHEMAS: list[bool] = []
_HYDRA: list[Any] = []  # wfeval's own GlobalHydra, initialised once
RUNS = Path("outputs") / "runs"  # as the CLI: outputs/runs/<time>_<benchmark>_<model>


@contextlib.contextmanager
def _wfeval_hydra() -> Iterator[None]:
    """Hydra initialised on wfeval's configs for the block, whatever the caller's own Hydra app holds:
    its global instance is set aside (not copied) and put back after, and its job's HydraConfig (search
    path, choices) is not the run's. wfeval's instance is made once per process and reused."""
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig
    from hydra.core.singleton import Singleton

    instances = Singleton._instances
    held, held_job = instances.pop(GlobalHydra, None), HydraConfig.instance().cfg
    HydraConfig.instance().cfg = None  # type: ignore[assignment]
    try:
        if _HYDRA:
            instances[GlobalHydra] = _HYDRA[0]
        else:
            from hydra import initialize_config_module

            initialize_config_module("wfeval.conf", version_base="1.3")  # initialises the global instance
            _HYDRA.append(instances[GlobalHydra])
        yield
    finally:
        instances.pop(GlobalHydra, None)
        if held is not None:
            instances[GlobalHydra] = held
        HydraConfig.instance().cfg = held_job  # type: ignore[assignment]


@dataclasses.dataclass(frozen=True)
class Composed:
    """One composition, kept for the process: the node (read-only: runs only read it, Hydra's
    instantiate copies what it builds from) and its unresolved plain form (what .hydra/config.yaml holds)."""

    node: Any
    unresolved: dict


def _composed(overrides: tuple[str, ...]) -> Composed:
    """The composed config of ``overrides``, composed once per process."""
    with _LOCK:
        if overrides not in _COMPOSED:
            from hydra import compose
            from omegaconf import OmegaConf

            from wfeval.config import ConfigError, register_schemas
            from wfeval.config.errors import friendly_message
            from wfeval.metrics.selection import requested_metrics
            from wfeval.pipeline.metric_nodes import refuse_unknown_requested

            if not _SCHEMAS:
                register_schemas()
                _SCHEMAS.append(True)
            with _wfeval_hydra():
                try:
                    node = compose(config_name="config", overrides=list(overrides))
                except Exception as exc:  # the CLI's paragraph for a config error (wfeval/config/errors.py)
                    message = friendly_message(exc)
                    if message is None:
                        raise
                    raise ConfigError(message.removeprefix("Config error: ")) from None
            # what the command line refuses in build: an unknown metric= option (Hydra's job is not
            # there to ask, so the overrides of this call say what was requested)
            refuse_unknown_requested(requested_metrics(overrides), node.get("metric") or {})
            OmegaConf.set_readonly(node, True)
            _COMPOSED[overrides] = Composed(node, OmegaConf.to_container(node, resolve=False))
        return _COMPOSED[overrides]


def _class_path(obj: Any) -> str:
    cls = type(obj)
    return f"{cls.__module__}.{cls.__qualname__}"


def _folder_name(text: str) -> str:
    return re.sub(r"[^A-Za-z0-9_.-]+", "-", text).strip("-") or "model"


def overrides_for(benchmark: str | None, metrics: Sequence[str] | str | None, protocol: str | None, task: str | None,
                  report: bool, overrides: Sequence[str]) -> tuple[str, ...]:
    """The command line this call stands for (the caller's ``overrides`` last: they win)."""
    out = ["model=python"]
    if benchmark:
        out.append(f"benchmark={benchmark}")
    if task:
        out.append(f"task={task}")
    if protocol:
        out.append(f"protocol={protocol}")
    if metrics is not None:
        out.append(f"metric=[{','.join([metrics] if isinstance(metrics, str) else list(metrics))}]")
    out += [f"run.report={str(bool(report)).lower()}", "run.progress=off"]
    return (*out, *[str(o) for o in overrides])


def evaluate(model: Any, benchmark: str | None = "gridworld", metrics: Sequence[str] | str | None = None, *,
             protocol: str | None = None, task: str | None = None, overrides: Sequence[str] = (),
             run_dir: str | Path | None = None, report: bool = False, model_version: Any = None,
             verbose: bool = False, tracker: Any = None, step: int | None = None) -> Results:
    """Evaluate the model object ``model`` (``generate(requests)``, or ``start``/``step``) and return
    its results (measurement id → :class:`~wfeval.results.measurements.Measurement`).

    ``benchmark``, ``metrics`` (None: the benchmark's suite), ``protocol``, ``task``: the config
    group choices of the command line; ``overrides``: any other override (``benchmark.num_samples=8``,
    ``run.store_dir=...``, ``model.batch_size=4``, ``run.trust=[...]``); ``run_dir``: the run folder
    (default ``outputs/runs/<time>_<benchmark>_<model name>``); ``report``: write report.html;
    ``model_version``: what identifies this state of the model beyond its weights (e.g. the
    training step; required only when part of the object's state cannot be hashed and it has no
    ``fingerprint()``: the refusal says where);
    ``verbose``: print the results table as the CLI does; ``tracker``: ``"mlflow"``, ``"tensorboard"``,
    ``"wandb"``, a list, or tracker objects, logging this evaluation at training step ``step`` into one
    tracker run per training run (:mod:`wfeval.pipeline.tracking`). Config errors raise
    :class:`~wfeval.config.errors.ConfigError` with the CLI's message.
    """
    from omegaconf import OmegaConf

    from wfeval.config import trust
    from wfeval.config.run_config import RunConfig, RunSettings
    from wfeval.pipeline import tracking
    from wfeval.pipeline.runner import run_from_config

    if model is None or isinstance(model, (str, bytes)):
        raise TypeError("wfeval.evaluate: model= takes the model object itself (for a config option such as "
                        "'oracle', run python -m wfeval model=oracle)")
    tracking.refuse_without_effect(overrides, tracker, step)  # never an override silently ignored
    trackers = tracking.trackers_of(tracker, overrides) if tracker is not None else []
    overrides = [o for o in overrides if not str(o).lstrip("+").startswith("hydra.callbacks.")]  # the trackers'
    composed = _composed(overrides_for(benchmark, metrics, protocol, task, report, overrides))
    target = _class_path(model)
    model_keys: dict[str, Any] = {"object": {"_target_": target}}
    if model_version is not None:
        model_keys["version"] = str(model_version)
    plain = _with_model(OmegaConf.to_container(composed.node, resolve=True), model_keys)  # resolved now: oc.env ...
    config = RunConfig(composed.node, plain, RunSettings.from_mapping(plain.get("run") or {}), model_object=model)
    policy = trust.TrustPolicy.from_overrides(list(overrides))  # the caller's overrides are their command line
    policy = dataclasses.replace(policy, command_line=policy.command_line | {("model.object._target_", target)})
    if run_dir is None:
        name = _folder_name(str(plain["model"].get("name") or getattr(model, "name", "") or type(model).__name__))
        run_dir = RUNS / f"{datetime.now():%Y-%m-%d_%H-%M-%S-%f}_{_folder_name(str(benchmark or 'benchmark'))}_{name}"
    run_dir = Path(run_dir)
    _write_config(_with_model(copy.deepcopy(composed.unresolved), model_keys), run_dir)
    with trust.activated(policy), _wfeval_hydra():
        summary = run_from_config(config, run_dir, echo=verbose)
    tracking.log_evaluation(trackers, summary.output_dir, step)
    return Results(summary.document, summary.output_dir, generated=summary.generated, cached=summary.cached)


def _with_model(plain: dict, keys: dict) -> dict:
    """``plain`` with the model section's object class and version of this call."""
    model = plain["model"] = dict(plain.get("model") or {})
    model["object"] = {**dict(model.get("object") or {}), **keys["object"]}
    if "version" in keys:
        model["version"] = keys["version"]
    return plain


def _write_config(plain: dict, run_dir: Path) -> None:
    """``.hydra/config.yaml`` as the CLI's run folder has it (the unresolved config, what replay reads);
    no overrides.yaml: a run of an object in memory cannot be resumed from a command line."""
    import yaml

    from wfeval.storage.rundir import FILES

    from wfeval.storage.safe_io import atomic_write_bytes

    dumper = getattr(yaml, "CSafeDumper", yaml.SafeDumper)
    text = yaml.dump(plain, Dumper=dumper, sort_keys=False, allow_unicode=True)
    atomic_write_bytes(run_dir / FILES.config, text.encode("utf-8"))
