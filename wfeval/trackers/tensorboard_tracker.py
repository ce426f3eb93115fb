"""``tracker=tensorboard``: each run (each job of a sweep) as a TensorBoard run (event files).

Layout: ``<log_dir>/<run folder name>`` for a run, ``<log_dir>/<sweep folder name>/<job>`` for the
jobs of a sweep, so ``tensorboard --logdir <log_dir>/<sweep>`` shows the sweep as one experiment
with one run per job. Logged with torch's ``SummaryWriter`` at step 0: every measurement with its
interval and counts as TensorBoard scalars (``simple_value``: float32, what the Scalars dashboard and
``EventAccumulator.Scalars`` read; the exact float64 numbers are in the attached ``results.json``);
the config (YAML), the overrides, the status and ``results.md`` as text; the run folder's report
files copied into ``artifacts/`` beside the event file.

From Python (:meth:`log_step`, ``wfeval.evaluate(..., tracker="tensorboard", step=N)``): every
evaluation of a training run goes into one TensorBoard run, ``<log_dir>/<run_name>`` (default
``<model>-<time of the first evaluation>``), its scalars at the caller's step; one writer is kept
open and flushed after each evaluation (:meth:`close` closes it); report files in
``artifacts/step_<N>/``.
"""

from __future__ import annotations

import shutil
from pathlib import Path

from wfeval.storage.rundir import FILES
from wfeval.storage.safe_io import atomic_target
from wfeval.trackers.base import Tracker
from wfeval.trackers.record import RunRecord, safe_key


class TensorBoardTracker(Tracker):
    name, module, package = "tensorboard", "tensorboard", "tensorboard"

    def __init__(self, log_dir: str = "outputs/tensorboard", run_name: str | None = None):
        super().__init__()
        self.log_dir, self.run_name = str(log_dir), run_name
        self._writer = None  # the training run's writer (log_step)

    def folder(self, record: RunRecord) -> Path:
        base, name = Path(self.log_dir).expanduser(), self.run_name or record.name
        return base / record.sweep / name if record.sweep else base / name

    def log(self, record: RunRecord) -> None:
        import yaml
        from torch.utils.tensorboard import SummaryWriter

        folder = self.folder(record)
        writer = SummaryWriter(log_dir=str(folder))
        try:
            for key, value in record.metrics.items():
                writer.add_scalar(safe_key(key), value, 0)
            writer.add_text("config", "```yaml\n" + yaml.safe_dump(record.config, sort_keys=False) + "```", 0)
            writer.add_text("overrides", " ".join(record.overrides) or "(none)", 0)
            writer.add_text("status", record.status + (f": {record.error}" if record.error else ""), 0)
            md = record.run_dir / FILES.results_md
            if md.is_file():
                writer.add_text(FILES.results_md, md.read_text(encoding="utf-8"), 0)
        finally:
            writer.close()
        artifacts = folder / "artifacts"
        artifacts.mkdir(parents=True, exist_ok=True)
        for path in record.artifacts:
            with atomic_target(artifacts / path.name) as tmp:
                shutil.copyfile(path, tmp)

    def log_at(self, record: RunRecord, step: int) -> None:
        folder = Path(self.log_dir).expanduser() / self.live_name(record)
        if self._writer is None:
            from torch.utils.tensorboard import SummaryWriter

            self._writer = SummaryWriter(log_dir=str(folder))
        for key, value in record.metrics.items():
            self._writer.add_scalar(safe_key(key), value, step)
        md = record.run_dir / FILES.results_md
        if md.is_file():
            self._writer.add_text(FILES.results_md, md.read_text(encoding="utf-8"), step)
        self._writer.add_text("status", record.status + (f": {record.error}" if record.error else ""), step)
        self._writer.flush()
        artifacts = folder / "artifacts" / f"step_{step}"
        artifacts.mkdir(parents=True, exist_ok=True)
        for path in record.artifacts:
            with atomic_target(artifacts / path.name) as tmp:
                shutil.copyfile(path, tmp)

    def close(self) -> None:
        if self._writer is not None:
            self._writer.close()
            self._writer = None
