"""Trackers for ``wfeval.evaluate(..., tracker=..., step=N)``, and the overrides that do nothing there.

On the command line a tracker is a Hydra callback (``tracker=mlflow``, docs/trackers.md); a call
from Python runs no Hydra job, so no callback: ``tracker=`` names the same trackers (``"mlflow"``,
``"tensorboard"``, ``"wandb"``, a list of them, or tracker objects such as
``wfeval.trackers.mlflow_tracker.MLflowTracker(tracking_uri=...)``) and each evaluation is logged
at the caller's ``step`` into ONE tracker run per training run (:meth:`wfeval.trackers.base.Tracker.log_step`).
A tracker named by a string is built once per process from its config file ``conf/tracker/<name>.yaml``
(its options: the command line's ``hydra.callbacks.wfeval_<name>.<option>=`` overrides), so every
call of the process's training loop lands in the same run.

An override that would have no effect through this API is refused with the reason, never ignored:
``tracker=...`` (use ``tracker=``), ``hydra.*`` other than ``hydra.searchpath`` and the chosen
trackers' options (the run folder is ``run_dir=``; sweeps and launchers belong to the command line).
"""

from __future__ import annotations

import threading
from typing import Any, Sequence

from wfeval.config.errors import ConfigError

_BUILT: dict[tuple, Any] = {}  # tracker name + options -> the tracker object of this process's training run
_LOCK = threading.Lock()
_API_OPTIONS = ("hydra.searchpath",)


def tracker_names(tracker: Any) -> list[str]:
    items = tracker if isinstance(tracker, (list, tuple)) else [tracker]
    return [t for t in items if isinstance(t, str)]


def refuse_without_effect(overrides: Sequence[str], tracker: Any, step: Any) -> None:
    """Refuse what a call from Python would silently ignore (ConfigError, the CLI's exit-2 paragraph)."""
    names = tracker_names(tracker)
    for override in overrides:
        key = str(override).split("=", 1)[0].lstrip("+~")
        if key == "tracker" or key.startswith("tracker."):
            raise ConfigError(
                f"'{override}' has no effect through wfeval.evaluate: trackers are Hydra callbacks, run only by "
                f"the command line. Pass it to the call instead: wfeval.evaluate(..., tracker='mlflow', step=<training "
                f"step>) (or tensorboard, wandb, a list, or a tracker object); docs/python-api.md.")
        if key.startswith("hydra.callbacks.wfeval_") and key.split(".")[2].removeprefix("wfeval_") in names:
            continue  # an option of a tracker this call names
        if key.startswith(("hydra.", "hydra/")) and key not in _API_OPTIONS:
            raise ConfigError(
                f"'{override}' has no effect through wfeval.evaluate: Hydra's own settings (hydra.*) apply to a "
                f"command-line job. The run folder is run_dir=; sweeps and launchers: python -m wfeval -m ...; a "
                f"tracker's options: tracker='<name>' with hydra.callbacks.wfeval_<name>.<option>=..., or a tracker "
                f"object (tracker=MLflowTracker(tracking_uri=...)).")
    if tracker is None and step is not None:
        raise ConfigError(f"step={step!r} is the training step a tracker logs at; without tracker= it has no effect. "
                          f"Pass tracker='mlflow' (or tensorboard, wandb), or leave step out.")
    if tracker is not None and step is None:
        raise ConfigError("tracker= logs each evaluation at the training step of the caller: pass step=<the training "
                          "step> (an int), so the evaluations of a training run form one curve.")


def trackers_of(tracker: Any, overrides: Sequence[str]) -> list[Any]:
    """The tracker objects ``tracker=`` stands for (built once per process per name and options)."""
    out = []
    for item in tracker if isinstance(tracker, (list, tuple)) else [tracker]:
        if isinstance(item, str):
            out.append(_built(item, _options(item, overrides)))
        elif callable(getattr(item, "log_step", None)):
            out.append(item)
        else:
            raise ConfigError(f"tracker={item!r}: a tracker is 'mlflow', 'tensorboard', 'wandb', a list of them, or "
                              f"an object with log_step(run_dir, step) (wfeval.trackers.mlflow_tracker.MLflowTracker, ...)")
    return out


def _options(name: str, overrides: Sequence[str]) -> dict[str, Any]:
    import yaml

    prefix, out = f"hydra.callbacks.wfeval_{name}.", {}
    for override in overrides:
        key, _, value = str(override).lstrip("+").partition("=")
        if key.startswith(prefix):
            out[key.removeprefix(prefix)] = yaml.safe_load(value) if value else None
    return out


def _built(name: str, options: dict[str, Any]) -> Any:
    from omegaconf import OmegaConf

    from wfeval.config.code import import_target
    from wfeval.config.plugins import builtin_targets, option_files

    if name not in builtin_targets("tracker"):
        raise ConfigError(f"tracker={name!r} is not a tracker; the trackers are: {', '.join(builtin_targets('tracker'))}")
    defaults = {k: v for k, v in option_files("tracker")[name].items() if k != "_target_"}
    unknown = sorted(set(options) - set(defaults) - {"run_name"})
    if unknown:
        raise ConfigError(f"tracker={name} has no option {', '.join(unknown)}; its options: "
                          f"{', '.join([*defaults, 'run_name'])}")
    resolved = OmegaConf.to_container(OmegaConf.create({**defaults, **options}), resolve=True)  # ${oc.env:...}
    key = (name, tuple(sorted((k, repr(v)) for k, v in resolved.items())))
    with _LOCK:
        if key not in _BUILT:
            _BUILT[key] = import_target(builtin_targets("tracker")[name])(**resolved)
        return _BUILT[key]


def log_evaluation(trackers: list[Any], run_dir: Any, step: int) -> None:
    """Each tracker logs the run folder at ``step``; a tracker that fails says so and changes no result
    (as on the command line, docs/trackers.md)."""
    import sys

    for tracker in trackers:
        try:
            tracker.log_step(run_dir, int(step))
        except Exception as exc:  # noqa: BLE001 - a tracker never fails a run: say it, keep going
            name = getattr(tracker, "name", type(tracker).__name__)
            print(f"wfeval: tracker {name} could not log {run_dir}: {type(exc).__name__}: {exc}", file=sys.stderr)
