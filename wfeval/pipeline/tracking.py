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

import numbers
import re
import threading
import warnings
from pathlib import Path
from typing import Any, Sequence

from wfeval.config.errors import ConfigError

_BUILT: dict[tuple, Any] = {}  # tracker name + options -> the tracker object of this process's training run
_LOCK = threading.Lock()
_API_OPTIONS = ("hydra.searchpath",)
TIMEOUT_S = 60.0  # how long one evaluation's logging may hold the caller (a tracker's own: tracker.timeout_s)


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
    if tracker is not None and (isinstance(step, bool) or not isinstance(step, numbers.Integral) or step < 0):
        raise ConfigError(f"step={step!r}: the training step a tracker logs at is a non-negative int (0, 1, 2, ...; "
                          f"not a bool, a float or a string), checked before anything runs so no evaluation is "
                          f"logged at a step it was not given.")


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
    resolved = _resolved(name, {**defaults, **options})
    key = (name, tuple(sorted((k, repr(v)) for k, v in resolved.items())))
    with _LOCK:
        if key not in _BUILT:
            _BUILT[key] = import_target(builtin_targets("tracker")[name])(**resolved)
        return _BUILT[key]


def _resolved(name: str, options: dict[str, Any]) -> dict[str, Any]:
    """The tracker's options with ``${oc.env:...}`` and the like resolved; one that cannot be is a
    ConfigError naming the option (and the environment variable that is not set)."""
    from omegaconf import OmegaConf
    from omegaconf.errors import OmegaConfBaseException

    cfg = OmegaConf.create(options)
    for key in options:
        try:
            OmegaConf.select(cfg, key, throw_on_missing=False)
        except OmegaConfBaseException as exc:
            text = str(exc).splitlines()[0]
            variable = re.search(r"Environment variable '([^']*)' not found", text)
            why = (f"the environment variable {variable.group(1)} is not set (set it, give the option a value, or "
                   f"a default: ${{oc.env:{variable.group(1)},<default>}})" if variable else text)
            raise ConfigError(f"tracker={name}: option {key} (hydra.callbacks.wfeval_{name}.{key}) cannot be "
                              f"resolved: {why}") from None
    return OmegaConf.to_container(cfg, resolve=True)


def log_evaluation(trackers: list[Any], run_dir: Any, step: int) -> None:
    """Each tracker logs the run folder (already written) at ``step``, within its deadline
    (``tracker.timeout_s``, default :data:`TIMEOUT_S`); a tracker that fails, calls
    ``sys.exit`` or does not finish in time changes no result and blocks the caller no longer: a
    RuntimeWarning ``wfeval: tracker <name> could not log <run folder>: <why>`` and an event
    ``tracker_failed`` in the run folder's events.jsonl (docs/trackers.md)."""
    for tracker in trackers:
        name = str(getattr(tracker, "name", "") or type(tracker).__name__)
        why = _within_deadline(tracker, name, run_dir, int(step))
        if why is None:
            continue
        warnings.warn(f"wfeval: tracker {name} could not log {run_dir} at step {int(step)}: {why}", RuntimeWarning,
                      stacklevel=3)
        try:
            from wfeval.storage.rundir import RunDirectory

            RunDirectory(Path(run_dir), create=False).event("tracker_failed", tracker=name, step=int(step), error=why)
        except OSError as exc:  # a full disk that refuses even that line must not fail the finished evaluation
            warnings.warn(f"events.jsonl: tracker_failed not recorded: {exc}", RuntimeWarning, stacklevel=3)


_BUSY: dict[int, threading.Thread] = {}  # id(tracker) -> its call still running past its deadline


def _within_deadline(tracker: Any, name: str, run_dir: Any, step: int) -> str | None:
    """Run the tracker's logging in a daemon thread and wait at most its deadline: None when it
    logged, else why not. A call still running past its deadline goes on in the background; the
    tracker's next evaluation is not logged while it does (said, not queued behind it)."""
    with _LOCK:
        running = _BUSY.get(id(tracker))
        if running is not None and running.is_alive():
            return "its call for an earlier evaluation is still running (past its deadline); this one is not logged"
    prepare = getattr(tracker, "bound_step", None)  # what lives in the caller's thread (MLflow's active run)
    work = prepare(run_dir, step) if callable(prepare) else (lambda: tracker.log_step(run_dir, step))
    outcome: list[str] = []

    def call() -> None:
        try:
            work()
        except SystemExit as exc:  # tracker code never ends the caller's script
            outcome.append(f"it ended the process (SystemExit({exc.code!r}), e.g. sys.exit) instead of returning "
                           f"or raising; caught, the evaluation goes on")
        except BaseException as exc:  # noqa: BLE001 - a tracker never fails an evaluation: say it, keep going
            outcome.append(f"{type(exc).__name__}: {exc}")

    timeout = float(getattr(tracker, "timeout_s", None) or TIMEOUT_S)
    thread = threading.Thread(target=call, name=f"wfeval-tracker-{name}", daemon=True)
    thread.start()
    thread.join(timeout)
    if thread.is_alive():
        with _LOCK:
            _BUSY[id(tracker)] = thread
        return (f"not finished within its deadline of {timeout:g} s (a server that does not answer?); it goes on in "
                f"the background, the results are written; set tracker.timeout_s for another deadline")
    return outcome[0] if outcome else None
