"""The Hydra callback every tracker shares: check the package, then log each job's run folder.

Registered under ``hydra.callbacks`` by ``tracker=<name>`` (``conf/tracker/<name>.yaml``), so it
runs with any launcher: Hydra calls :meth:`Tracker.on_job_end` in the process that ran the job
(a joblib worker included), after the run folder is written. A sweep's jobs land in one
experiment (``wfeval-sweep-<sweep folder>``), one tracker run per job; shards merged by the
sweep (``<sweep>/merged``) are logged as one more run, ``merged``.

From Python (``wfeval.evaluate(..., tracker=..., step=N)``, :mod:`wfeval.pipeline.evaluate`) a tracker
object logs each evaluation of a training run at the caller's step into ONE tracker run that it
keeps for the training run (:meth:`Tracker.log_step`; :meth:`Tracker.close` ends it).

A tracker never changes a result or the run's exit status: a package that is missing stops the
run before it starts (exit 2, naming the ``trackers`` extra); a failure while logging is printed
(``wfeval: tracker <name> could not log ...``) and the run folder keeps everything.
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Any

from hydra.experimental.callback import Callback

from wfeval.config.errors import ConfigError
from wfeval.config.extras import install_hint, not_importable
from wfeval.storage.rundir import FILES
from wfeval.trackers.record import RunRecord, job_config, record_of

EXTRA = "trackers"


class Tracker(Callback):
    """Subclasses set :attr:`name`, :attr:`module` (imported to log) and :attr:`package`, call
    ``super().__init__()`` and implement :meth:`log`. Hydra swallows what a callback's hooks raise
    (a warning), so the package is checked when Hydra builds the callback, before anything runs."""

    name = ""
    module = ""  # the import that must succeed
    package = ""  # what pip installs for it

    run_name: str | None = None  # the tracker run's name (None: the run folder's; from Python: <model>-<time>)
    timeout_s: float | None = None  # from Python: one evaluation's logging deadline (None: pipeline.tracking.TIMEOUT_S)

    def __init__(self) -> None:
        self._require()  # Hydra builds callbacks before the run starts: a missing package stops it there

    def _require(self) -> None:
        if not_importable([self.module]):
            raise ConfigError(
                f"tracker={self.name} needs the '{self.module}' package, which is not installed. Install the "
                f"optional extra: {install_hint(self.package, EXTRA)} (MLflow, TensorBoard and W&B), or only "
                f"pip install {self.package}. A run without tracker={self.name} needs none of them.")

    def on_job_end(self, config: Any, job_return: Any = None, **kwargs: Any) -> None:
        from hydra.types import RunMode

        hydra = job_return.hydra_cfg.hydra  # Hydra's record of this job (hydra.core.utils.JobReturn)
        sweep = getattr(self, "_sweep_dir", None) if hydra.mode == RunMode.MULTIRUN else None
        run_dir = Path(str(hydra.runtime.output_dir))
        self._log_folder(run_dir, config=job_config(config), overrides=[str(o) for o in hydra.overrides.task],
                         sweep_dir=sweep)

    def on_multirun_start(self, config: Any, **kwargs: Any) -> None:
        # the sweep folder as the launcher resolves it (${now:...} once, on the sweep's own config)
        self._sweep_dir = Path(str(config.hydra.sweep.dir))

    def on_multirun_end(self, config: Any, **kwargs: Any) -> None:
        merged = Path(str(config.hydra.sweep.dir)) / FILES.merged
        if (merged / FILES.results).is_file():
            self._log_folder(merged, sweep_dir=merged.parent)

    def _log_folder(self, run_dir: Path, **options: Any) -> None:
        try:
            self.log(record_of(run_dir, **options))
        except (Exception, SystemExit) as exc:  # noqa: BLE001 - a tracker never fails or ends a run: say it, go on
            print(f"wfeval: tracker {self.name} could not log {run_dir}: {type(exc).__name__}: {exc}", file=sys.stderr)

    def log(self, record: RunRecord) -> None:
        raise NotImplementedError

    # -- from Python, inside a training loop: one tracker run, one point per evaluation at its step --

    def log_step(self, run_dir: str | Path, step: int) -> None:
        """Log the evaluation written to ``run_dir`` at training step ``step`` into this tracker's
        run for the training run (made on the first call, or the library's active run)."""
        self.log_at(record_of(Path(run_dir)), int(step))

    def bound_step(self, run_dir: str | Path, step: int) -> Any:
        """:meth:`log_step`'s work, prepared in the caller's thread (what a library keeps per thread,
        such as MLflow's active run, is read here) to run in another under a deadline."""
        return lambda: self.log_step(run_dir, step)

    def log_at(self, record: RunRecord, step: int) -> None:
        raise NotImplementedError

    def close(self) -> None:
        """End the training run's tracker run (nothing to do where each call already ends it)."""

    def live_name(self, record: RunRecord) -> str:
        """The tracker run's name: ``run_name``, else ``<model>-<time of the first evaluation>``."""
        if not getattr(self, "_live_name", None):
            from datetime import datetime

            self._live_name = self.run_name or f"{record.tags.get('wfeval.model', 'model')}-{datetime.now():%Y%m%d-%H%M%S}"
        return self._live_name
