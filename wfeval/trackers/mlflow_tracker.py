"""``tracker=mlflow``: each run (each job of a sweep) as an MLflow run.

Logged: the job's config as parameters (flattened, ``benchmark.num_samples``; values longer than
MLflow's limit are cut, the whole config is in the ``config.yaml`` artifact), wfeval's tags
(``wfeval.model``, ``wfeval.benchmark``, ``wfeval.status``, ``wfeval.run_dir``, overrides, ...),
every measurement with its interval and counts as metrics at step 0 (:mod:`wfeval.trackers.record`),
and the run folder's report files as artifacts under ``wfeval/``. A failed job's run ends ``FAILED``.

``tracking_uri``: a path or ``file:`` URI is MLflow's file store (the default,
``outputs/mlruns``; ``mlflow ui --backend-store-uri outputs/mlruns``). MLflow 3 keeps that store
in maintenance mode and refuses it unless ``MLFLOW_ALLOW_FILE_STORE=true``; wfeval sets that for a
file store it was asked to use (only when unset). Any other URI (``sqlite:///mlflow.db``,
``http://server:5000``) is handed to MLflow as it is.
"""

from __future__ import annotations

import os
import time
from pathlib import Path
from typing import Any

from wfeval.trackers.base import Tracker
from wfeval.trackers.record import RunRecord, flatten, safe_key


def tracking_uri_of(uri: str | None) -> str:
    text = str(uri or "outputs/mlruns")
    if "://" in text or text.startswith("file:"):
        return text
    return Path(text).expanduser().resolve().as_uri()  # a bare path: MLflow's file store


class MLflowTracker(Tracker):
    name, module, package = "mlflow", "mlflow", "mlflow-skinny"

    def __init__(self, tracking_uri: str | None = None, experiment: str | None = None):
        super().__init__()
        self.tracking_uri = tracking_uri_of(tracking_uri)
        self.experiment = experiment

    def _client(self) -> Any:
        from mlflow.tracking import MlflowClient

        if self.tracking_uri.startswith("file:"):
            os.environ.setdefault("MLFLOW_ALLOW_FILE_STORE", "true")
        return MlflowClient(tracking_uri=self.tracking_uri)

    def experiment_id(self, client: Any, name: str) -> str:
        from mlflow.exceptions import MlflowException

        found = client.get_experiment_by_name(name)
        if found is not None:
            return found.experiment_id
        try:
            return client.create_experiment(name)
        except MlflowException:  # another job of the sweep created it first
            return client.get_experiment_by_name(name).experiment_id

    def log(self, record: RunRecord) -> None:
        from mlflow.entities import Metric, Param, RunTag
        from mlflow.utils.validation import MAX_PARAM_VAL_LENGTH, MAX_PARAMS_TAGS_PER_BATCH

        client = self._client()
        experiment = self.experiment_id(client, self.experiment or record.experiment)
        run = client.create_run(experiment, run_name=record.name, tags={k: v[:5000] for k, v in record.tags.items()})
        run_id, now = run.info.run_id, int(time.time() * 1000)
        try:
            metrics = [Metric(safe_key(k), v, now, 0) for k, v in record.metrics.items()]
            cut = MAX_PARAM_VAL_LENGTH
            params = [Param(safe_key(k)[:250], v if len(v) <= cut else v[:cut - 1] + "…")
                      for k, v in flatten(record.config).items()]
            for i in range(0, len(metrics), 1000):
                client.log_batch(run_id, metrics=metrics[i:i + 1000])
            for i in range(0, len(params), MAX_PARAMS_TAGS_PER_BATCH):
                client.log_batch(run_id, params=params[i:i + MAX_PARAMS_TAGS_PER_BATCH])
            if record.error:
                client.log_batch(run_id, tags=[RunTag("wfeval.error", str(record.error)[:5000])])
            client.log_dict(run_id, record.config, "config.yaml")
            for path in record.artifacts:
                client.log_artifact(run_id, str(path), artifact_path="wfeval")
        except Exception:
            client.set_terminated(run_id, "FAILED")
            raise
        client.set_terminated(run_id, "FINISHED" if record.completed else "FAILED")
