"""``wfeval.evaluate(model=...)``: evaluate a model object from Python, e.g. inside a training loop.

    import wfeval
    results = wfeval.evaluate(model=my_model, benchmark="gridworld", metrics=["psnr", "ssim"],
                              overrides=["benchmark.num_samples=8"], model_version=step)
    results["gridworld.psnr"].value, results["gridworld.psnr"].interval, results.run_dir

The config is composed once with Hydra's compose API exactly as ``python -m wfeval`` composes it
(:func:`wfeval.pipeline.compose.compose_run`; ``model=python`` with the object's class as
``model.object._target_``; every override of the command line works), resolved once into a
:class:`~wfeval.config.run_config.RunConfig` that carries the object, and run by
:func:`wfeval.pipeline.runner.run_from_config`: the same run folder, caches, output contract and
statistics, so the same numbers as the CLI. The object's
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

_COMPOSED: dict[tuple[str, ...], Any] = {}  # run configs by their override list (this process)
_LOCK = threading.Lock()
_SCHEMAS: list[bool] = []
RUNS = Path("outputs") / "runs"  # as the CLI: outputs/runs/<time>_<benchmark>_<model>


@contextlib.contextmanager
def _wfeval_hydra() -> Iterator[None]:
    """Hydra's compose API on wfeval's configs for the block, whatever the caller's own Hydra app holds:
    its global instance is set aside and put back after, through Hydra's public ``GlobalHydra`` methods.
    Nothing a run does reads Hydra's job state, so the caller's job is left as it is."""
    from hydra import initialize_config_module
    from hydra.core.global_hydra import GlobalHydra

    held = GlobalHydra.instance()
    caller = held.hydra if held.is_initialized() else None
    held.clear()
    try:
        with initialize_config_module("wfeval.conf", version_base="1.3"):
            yield
    finally:
        GlobalHydra.instance().clear()
        if caller is not None:
            GlobalHydra.instance().initialize(caller)


def _composed(overrides: tuple[str, ...]) -> Any:
    """The run config of ``overrides`` (a :class:`~wfeval.config.run_config.RunConfig`, its metrics
    selected), composed once per process: this call's boundary, as the CLI's job is the command's."""
    with _LOCK:
        if overrides not in _COMPOSED:
            from omegaconf import OmegaConf

            from wfeval.config import ConfigError, register_schemas
            from wfeval.config.errors import friendly_message
            from wfeval.config.plugin_refusals import refuse_conflicts
            from wfeval.pipeline.compose import compose_run

            if not _SCHEMAS:
                register_schemas()
                _SCHEMAS.append(True)
            with _wfeval_hydra():
                try:
                    config = compose_run(overrides)  # composed once, the metric nodes it may add included
                except ConfigError:
                    raise
                except Exception as exc:  # the CLI's paragraph for a config error (wfeval/config/errors.py)
                    message = friendly_message(exc)
                    if message is None:
                        raise
                    raise ConfigError(message.removeprefix("Config error: ")) from None
                OmegaConf.set_readonly(config.cfg, True)
                refuse_conflicts(config.job.choices, config.metric_nodes or {})  # a name two packages offer
            _COMPOSED[overrides] = dataclasses.replace(config, hydra=None,  # Hydra's node: the CLI's job only
                                                       written=OmegaConf.to_container(config.cfg, resolve=False))
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
    from wfeval.config.run_config import RunSettings
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
    plain = _with_model(OmegaConf.to_container(composed.cfg, resolve=True), model_keys)  # resolved now: oc.env ...
    config = dataclasses.replace(composed, _plain=plain, run=RunSettings.from_mapping(plain.get("run") or {}),
                                 model_object=model, written=_with_model(copy.deepcopy(dict(composed.written)),
                                                                         model_keys))
    policy = trust.TrustPolicy.from_overrides(list(overrides))  # the caller's overrides are their command line
    policy = dataclasses.replace(policy, command_line=policy.command_line | {("model.object._target_", target)})
    if run_dir is None:
        name = _folder_name(str(plain["model"].get("name") or getattr(model, "name", "") or type(model).__name__))
        run_dir = RUNS / f"{datetime.now():%Y-%m-%d_%H-%M-%S-%f}_{_folder_name(str(benchmark or 'benchmark'))}_{name}"
    run_dir = Path(run_dir)
    with trust.activated(policy):
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
