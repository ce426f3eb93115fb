"""``tracker=mlflow``: each run (each job of a sweep) as an MLflow run.

Logged: the job's config as parameters (flattened, ``benchmark.num_samples``; values longer than
MLflow's limit are cut, the whole config is in the ``config.yaml`` artifact), wfeval's tags
(``wfeval.model``, ``wfeval.benchmark``, ``wfeval.status``, ``wfeval.run_dir``, overrides, ...),
every measurement with its interval and counts as metrics at step 0 (:mod:`wfeval.trackers.record`),
and the run folder's report files as artifacts under ``wfeval/``. A failed job's run ends ``FAILED``.

From Python (:meth:`log_step`, ``wfeval.evaluate(..., tracker="mlflow", step=N)``): every evaluation
of a training run goes into one MLflow run, its metrics at the caller's step (a metric history); the
run is the fluent API's active run when the caller has one (``mlflow.start_run()``: the evaluations
sit beside the training loss), else one this tracker makes on the first call and marks finished
after each. Into that run go a handful of ``wfeval.*`` parameters (``wfeval.model``,
``wfeval.benchmark``, ...: :func:`wfeval.trackers.record.summary_params`, at most 20, logged once:
MLflow's parameters cannot change) and each evaluation's whole config as one artifact
``wfeval/step_<N>/config.yaml``, never every leaf of the config.

``tracking_uri``: the default is MLflow's database store in ``outputs/mlflow.db`` (SQLite; its
artifacts in ``outputs/mlartifacts``), which mlflow-skinny serves with SQLAlchemy and Alembic (the
``trackers`` extra installs them). A path or ``file:`` URI is MLflow's file store, which MLflow 3
keeps in maintenance mode and refuses unless the environment sets ``MLFLOW_ALLOW_FILE_STORE=true``:
the tracker says so when it is built, before the run starts, and never sets it. Any other URI
(``http://server:5000``, ``postgresql://...``) is handed to MLflow as it is.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path
from typing import Any

from wfeval.config.errors import ConfigError
from wfeval.config.extras import require
from wfeval.trackers.base import EXTRA, Tracker
from wfeval.trackers.record import RunRecord, flatten, record_of, safe_key

_CALLER = object()  # log_at's active run: the one of the thread it runs in


DEFAULT_DB = "outputs/mlflow.db"
DATABASES = ("sqlite", "postgresql", "mysql", "mssql")  # MLflow's SQLAlchemy store: needs sqlalchemy, alembic


def tracking_uri_of(uri: str | None) -> str:
    """The URI MLflow is given: the default database, a relative ``sqlite:///`` path and a bare path
    made absolute (a bare path or ``file:`` is the file store)."""
    text = str(uri or f"sqlite:///{DEFAULT_DB}")
    if text.startswith("sqlite:///") and not text.startswith("sqlite:////") and text != "sqlite:///:memory:":
        return "sqlite:///" + str(Path(text[len("sqlite:///"):]).expanduser().resolve())
    if "://" in text or text.startswith("file:"):
        return text
    return Path(text).expanduser().resolve().as_uri()  # a bare path: MLflow's file store


def _scheme(uri: str) -> str:
    return uri.split(":", 1)[0].split("+", 1)[0].lower()


def check_store(uri: str) -> None:
    """Refuse, before the run, a store this MLflow will not open: a database without SQLAlchemy and
    Alembic, or the file store without MLflow 3's opt-in (which the caller sets, not wfeval)."""
    if _scheme(uri) in DATABASES:
        require(f"tracker=mlflow with tracking_uri {uri} (MLflow's database store)", ["sqlalchemy", "alembic"],
                EXTRA)
    elif _scheme(uri) == "file":
        from mlflow import environment_variables

        allowed = getattr(environment_variables, "MLFLOW_ALLOW_FILE_STORE", None)  # MLflow 3's opt-in
        if allowed is not None and not allowed.get():
            raise ConfigError(
                f"tracker=mlflow: tracking_uri {uri} is MLflow's file store, which MLflow 3 refuses unless the "
                "environment sets MLFLOW_ALLOW_FILE_STORE=true. Set it where you start the run "
                "(MLFLOW_ALLOW_FILE_STORE=true python -m wfeval ...), or use MLflow's database store: leave "
                f"tracking_uri unset (sqlite:///{DEFAULT_DB}) or give a sqlite:/// URI.")


def artifact_location(uri: str) -> str | None:
    """Where the artifacts of an experiment wfeval makes on a SQLite store go: ``mlartifacts`` beside
    the database file (MLflow's own default is ``./mlruns`` in the working folder); else MLflow's."""
    if _scheme(uri) != "sqlite" or not uri.startswith("sqlite:////"):
        return None
    return (Path(uri[len("sqlite:///"):]).parent / "mlartifacts").as_uri()


class MLflowTracker(Tracker):
    name, module, package = "mlflow", "mlflow", "mlflow-skinny"

    def __init__(self, tracking_uri: str | None = None, experiment: str | None = None, run_name: str | None = None):
        super().__init__()
        self.tracking_uri = tracking_uri_of(tracking_uri)
        check_store(self.tracking_uri)
        self.experiment, self.run_name = experiment, run_name
        self._live: str | None = None  # the run id of the training run's evaluations (log_step)

    def _client(self) -> Any:
        from mlflow.tracking import MlflowClient

        return MlflowClient(tracking_uri=self.tracking_uri)

    def on_multirun_start(self, config: Any, **kwargs: Any) -> None:
        super().on_multirun_start(config, **kwargs)
        try:  # a database store made once, here, not by several parallel jobs at once
            self._client().search_experiments(max_results=1)
        except Exception as exc:  # noqa: BLE001 - a tracker never fails a run: each job says it again
            print(f"wfeval: tracker mlflow could not open {self.tracking_uri}: {type(exc).__name__}: {exc}",
                  file=sys.stderr)

    def experiment_id(self, client: Any, name: str) -> str:
        from mlflow.exceptions import MlflowException

        found = client.get_experiment_by_name(name)
        if found is not None:
            return found.experiment_id
        try:
            return client.create_experiment(name, artifact_location=artifact_location(self.tracking_uri))
        except MlflowException:  # another job of the sweep created it first
            return client.get_experiment_by_name(name).experiment_id

    def log(self, record: RunRecord) -> None:
        from mlflow.entities import Metric, Param, RunTag
        from mlflow.utils.validation import MAX_PARAM_VAL_LENGTH, MAX_PARAMS_TAGS_PER_BATCH

        client = self._client()
        experiment = self.experiment_id(client, self.experiment or record.experiment)
        run = client.create_run(experiment, run_name=self.run_name or record.name, tags={k: v[:5000] for k, v in record.tags.items()})
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

    def bound_step(self, run_dir: str | Path, step: int) -> Any:
        active = _active_run()  # MLflow keeps the active run per thread: read in the caller's
        return lambda: self.log_at(record_of(Path(run_dir)), int(step), active=active)

    def log_at(self, record: RunRecord, step: int, active: Any = _CALLER) -> None:
        from mlflow.entities import Metric, Param, RunTag

        client, run_id, own = self._live_run(record, _active_run() if active is _CALLER else active)
        now = int(time.time() * 1000)
        metrics = [Metric(safe_key(k), v, now, step) for k, v in record.metrics.items()]
        for i in range(0, len(metrics), 1000):
            client.log_batch(run_id, metrics=metrics[i:i + 1000])
        known = client.get_run(run_id).data.params  # parameters cannot change: the first evaluation's stay
        params = [Param(key, value) for key, value in record.params.items() if key not in known]
        tags = [RunTag(k, v[:5000]) for k, v in {**record.tags, "wfeval.step": str(step)}.items()]
        for i in range(0, max(len(params), len(tags)), 100):
            client.log_batch(run_id, params=params[i:i + 100], tags=tags[i:i + 100])
        client.log_dict(run_id, record.config, f"wfeval/step_{step}/config.yaml")
        for path in record.artifacts:
            client.log_artifact(run_id, str(path), artifact_path=f"wfeval/step_{step}")
        if own:
            client.set_terminated(run_id, "FINISHED" if record.completed else "FAILED")

    def _live_run(self, record: RunRecord, active: tuple[str, str] | None) -> tuple[Any, str, bool]:
        """(client, run id, made here): the caller's active fluent run (tracking URI, run id), else this
        training run's own."""
        if active is not None:
            from mlflow.tracking import MlflowClient

            return MlflowClient(tracking_uri=active[0]), active[1], False
        client = self._client()
        if self._live is None:
            experiment = self.experiment_id(client, self.experiment or record.experiment)
            self._live = client.create_run(experiment, run_name=self.live_name(record)).info.run_id
        return client, self._live, True


def _active_run() -> tuple[str, str] | None:
    """(tracking URI, run id) of the fluent API's active run in this thread, if the caller has one."""
    import sys

    fluent = sys.modules.get("mlflow")
    active = fluent.active_run() if fluent is not None and hasattr(fluent, "active_run") else None
    return None if active is None else (fluent.get_tracking_uri(), active.info.run_id)

