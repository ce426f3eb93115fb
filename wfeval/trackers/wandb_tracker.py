"""``tracker=wandb``: each run (each job of a sweep) as a Weights & Biases run, offline by default.

``mode: offline`` (default) writes ``<dir>/wandb/offline-run-*/`` and needs no account or
network (``wandb sync`` uploads it later); ``mode: online`` logs to the server. A sweep's jobs
share one W&B group (``wfeval-sweep-<sweep folder>``); ``project`` defaults to ``wfeval``.
Logged: the job's config as the run config, wfeval's model/benchmark/protocol as tags, every
measurement with its interval and counts in the run summary, the run folder's report files as one
artifact of type ``wfeval-report``; a failed job's run exits with code 1. wandb's console capture,
system metrics and git probing are off.

From Python (:meth:`log_step`, ``wfeval.evaluate(..., tracker="wandb", step=N)``): every evaluation
of a training run goes into one W&B run: the caller's active run when there is one
(``wandb.init()`` before the loop; the values are logged with ``wfeval/step`` and charted against
it, so the caller's own step counter is left alone), else one this tracker starts on the first
call (named ``run_name`` or ``<model>-<time>``) and logs at the caller's step; :meth:`close`
finishes it (else wandb finishes it when the process exits).
"""

from __future__ import annotations

import re
from pathlib import Path

from wfeval.config.errors import ConfigError
from wfeval.trackers.base import Tracker
from wfeval.trackers.record import RunRecord

_ARTIFACT_NAME = re.compile(r"[^A-Za-z0-9_.-]")


class WandbTracker(Tracker):
    name, module, package = "wandb", "wandb", "wandb"

    def __init__(self, project: str = "wfeval", mode: str = "offline", dir: str = "outputs",
                 entity: str | None = None, group: str | None = None, run_name: str | None = None):
        super().__init__()
        self.run_name, self._run = run_name, None
        if mode not in ("offline", "online"):
            raise ConfigError(f"hydra.callbacks.wfeval_wandb.mode must be offline or online, got {mode!r}")
        self.project, self.mode, self.dir, self.entity, self.group = project, mode, str(dir), entity, group

    def log(self, record: RunRecord) -> None:
        import wandb

        Path(self.dir).expanduser().mkdir(parents=True, exist_ok=True)
        tags = [record.tags[k] for k in ("wfeval.model", "wfeval.benchmark", "wfeval.protocol") if k in record.tags]
        run = wandb.init(
            project=self.project, entity=self.entity, name=self.run_name or record.name, job_type="evaluation",
            group=self.group or (record.experiment if record.sweep else None), dir=str(Path(self.dir).expanduser()),
            mode=self.mode, config=record.config, tags=[t[:64] for t in tags], notes=str(record.run_dir.resolve()),
            settings=_settings(wandb),
        )
        try:
            run.summary.update({**record.metrics, "wfeval/status": record.status,
                                "wfeval/run_dir": str(record.run_dir)})
            if record.artifacts:
                artifact = wandb.Artifact(_ARTIFACT_NAME.sub("_", f"wfeval-report-{record.name}")[:128],
                                          type="wfeval-report", metadata={"run_dir": str(record.run_dir.resolve())})
                for path in record.artifacts:
                    artifact.add_file(str(path), name=path.name)
                run.log_artifact(artifact)
        finally:
            run.finish(exit_code=0 if record.completed else 1)

    def log_at(self, record: RunRecord, step: int) -> None:
        import wandb

        if self._run is None and wandb.run is not None:  # the caller's run: chart against wfeval/step
            wandb.run.define_metric("wfeval/step")
            for key in record.metrics:
                wandb.run.define_metric(key, step_metric="wfeval/step")
            wandb.run.log({**record.metrics, "wfeval/step": step})
            return
        if self._run is None:
            Path(self.dir).expanduser().mkdir(parents=True, exist_ok=True)
            self._run = wandb.init(
                project=self.project, entity=self.entity, name=self.live_name(record), job_type="evaluation",
                group=self.group, dir=str(Path(self.dir).expanduser()), mode=self.mode, config=record.config,
                settings=_settings(wandb))
        self._run.log(dict(record.metrics), step=step)

    def close(self) -> None:
        if self._run is not None:
            self._run.finish()
            self._run = None


def _settings(wandb):  # wandb's console capture, system metrics and git probing off
    return wandb.Settings(console="off", x_disable_stats=True, disable_git=True, silent=True)
