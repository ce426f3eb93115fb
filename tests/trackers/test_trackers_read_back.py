"""`tracker=[mlflow,tensorboard,wandb]`: each library reads back exactly the numbers of results.json.

One sweep of two jobs through the CLI with all three trackers (Hydra callbacks); then MLflow's
client (its database store, SQLite), TensorBoard's event accumulator (``Scalars``: TensorBoard scalars,
not tensors) and W&B's own reader of an offline run file
(``wandb.sdk.internal.datastore``: the dev extra pins a wandb that still ships it) read what was
logged. The expected numbers are computed here from each job's results.json, not through wfeval.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import sys
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import (SUPPORT_CONF, cli_env, made_once, one_wandb_at_a_time, only_run_dir, run_cli,
                            tracker_libraries)


@pytest.fixture(scope="module", autouse=True)
def _tracker_libraries():
    tracker_libraries()


MODELS = ("oracle", "static")
COUNTS = ("n_valid", "n_total", "n_skipped")


def expected_numbers(run_dir: Path) -> dict[str, float]:
    """From results.json: per measurement its value, interval and counts; score; eligible."""
    document = json.loads((run_dir / "results.json").read_text())
    out = {}
    for key, agg in document["results"].items():
        if agg["valid"]:
            value = agg["diagnostics"].get("value")
            out[f"{key}/value"] = float(value if value is not None else agg["normalized_stats"]["mean"])
        ci = agg.get("confidence_interval") or {}
        for name in ("low", "high"):
            if ci.get(name) is not None:
                out[f"{key}/ci_{name}"] = float(ci[name])
        out.update({f"{key}/{name}": float(agg[name]) for name in COUNTS})
        if agg["n_total"]:
            out[f"{key}/coverage"] = agg["n_valid"] / agg["n_total"]
    if document["scorecard"].get("score") is not None:
        out["score"] = float(document["scorecard"]["score"])
    out["eligible"] = 1.0 if document["evidence"]["eligible"] else 0.0
    return out


def horizon_numbers(run_dir: Path) -> dict[str, float]:
    """From metrics.jsonl: per measurement whose rows keep a curve of their own value (per_frame from
    first_frame, per_step from 1), each frame's mean over the valid samples (a sample's last row)."""
    benchmark = json.loads((run_dir / "results.json").read_text())["benchmark"]["id"]
    last = {}
    for line in (run_dir / "metrics.jsonl").read_text().splitlines():
        row = json.loads(line)
        last[(row["metric_id"], row["sample_id"])] = row
    values: dict[str, list[float]] = {}
    for (metric, _), row in last.items():
        c = row["components"]
        if row["diagnostics"]["status"] != "ok":
            continue
        points = (enumerate(c["per_frame"], start=c.get("first_frame", 0)) if "per_frame" in c
                  else enumerate(c["per_step"], start=1) if "per_step" in c else ())
        for x, value in points:
            values.setdefault(f"{benchmark}.{metric}/horizon/{x}", []).append(value)
    return {key: sum(v) / len(v) for key, v in values.items()}


def logged_numbers(run_dir: Path) -> dict[str, float]:
    return {**expected_numbers(run_dir), **horizon_numbers(run_dir)}


def wandb_env(root: Path) -> dict:
    return cli_env(WANDB_CONFIG_DIR=str(root / "wandb-config"), WANDB_CACHE_DIR=str(root / "wandb-cache"),
                   WANDB_DATA_DIR=str(root / "wandb-data"), WANDB_SILENT="true")


@pytest.fixture(scope="session")
def empty_mlflow_db(tmp_path_factory) -> Path:
    """An MLflow database store (SQLite) with MLflow's tables and nothing logged, made once per test run:
    creating one runs MLflow's migrations (2 s of CPU); a test copies it where its store goes."""

    def make(folder: Path) -> str:
        import warnings

        with warnings.catch_warnings():  # SQLAlchemy's deprecation of a loader MLflow uses, once per process
            warnings.simplefilter("ignore", DeprecationWarning)
            mlflow_client(folder / "mlflow.db").search_experiments()
        return str(folder / "mlflow.db")

    return Path(made_once(tmp_path_factory, "empty_mlflow_db", make))


def new_store(empty: Path, database: Path) -> str:
    """``database`` made an empty MLflow store (a copy of ``empty``); its ``sqlite:///`` URI."""
    import shutil

    database.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(empty, database)
    return f"sqlite:///{database}"


@pytest.fixture(scope="module")
def sweep(tmp_path_factory, empty_mlflow_db):
    root = tmp_path_factory.mktemp("trackers")
    new_store(empty_mlflow_db, root / "mlflow.db")
    with one_wandb_at_a_time(tmp_path_factory):  # wandb's service: one starting at a time across workers
        proc = run_cli(["-m", f"model={','.join(MODELS)}", "tracker=[mlflow,tensorboard,wandb]",
                        "benchmark.num_samples=3", "metric=[generated_rate,psnr,ssim]", f"run.store_dir={root / 'store'}",
                        "run.progress=off", f"hydra.callbacks.wfeval_mlflow.tracking_uri=sqlite:///{root / 'mlflow.db'}"],
                       cwd=root, env=wandb_env(root), timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    assert "could not log" not in proc.stderr, proc.stderr[-3000:]
    sweep_dir = only_run_dir(root / "outputs" / "multirun")
    jobs = {model: sweep_dir / f"{i}_{model}" for i, model in enumerate(MODELS)}
    return root, sweep_dir, jobs


def mlflow_client(database: Path):
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=f"sqlite:///{database}")


def test_mlflow_holds_one_experiment_per_sweep_one_run_per_job_with_results_json_numbers(sweep):
    root, sweep_dir, jobs = sweep
    client = mlflow_client(root / "mlflow.db")
    experiment = client.get_experiment_by_name(f"wfeval-sweep-{sweep_dir.name}")
    runs = {r.info.run_name: r for r in client.search_runs([experiment.experiment_id])}
    assert sorted(runs) == ["0_oracle", "1_static"]
    for model, job in jobs.items():
        run = runs[job.name]
        assert run.info.status == "FINISHED" and run.data.tags["wfeval.model"] == model
        assert run.data.metrics == logged_numbers(job)  # every number, exactly
        assert run.data.metrics["gridworld.psnr/horizon/15"] == horizon_numbers(job)["gridworld.psnr/horizon/15"]
        assert run.data.params["benchmark.num_samples"] == "3" and run.data.params["model._target_"].endswith("Model")
        assert run.data.tags["wfeval.run_dir"] == str(job.resolve()) and f"model={model}" in run.data.tags["wfeval.overrides"]
        names = {a.path for a in client.list_artifacts(run.info.run_id, "wfeval")}
        assert {"wfeval/results.json", "wfeval/results.md", "wfeval/report.html"} <= names
        local = client.download_artifacts(run.info.run_id, "wfeval/results.json", str(root / "dl" / model))
        assert Path(local).read_bytes() == (job / "results.json").read_bytes()
        assert run.info.artifact_uri.startswith((root / "mlartifacts").as_uri())  # beside the database


def _tensorboard(folder: Path) -> tuple[dict[str, float], dict[str, str]]:
    """The scalars as TensorBoard's Scalars dashboard reads them (``EventAccumulator.Scalars``), the texts."""
    from tensorboard.backend.event_processing import event_accumulator, plugin_event_accumulator
    from tensorboard.util import tensor_util

    events = event_accumulator.EventAccumulator(str(folder))
    events.Reload()
    scalars = {}
    for tag in events.Tags()["scalars"]:
        (event,) = events.Scalars(tag)
        assert event.step == 0
        scalars[tag] = event.value
    assert all(tag.endswith("/text_summary") for tag in events.Tags()["tensors"])  # texts only, no scalar as a tensor
    texts = {}
    plugins = plugin_event_accumulator.EventAccumulator(str(folder))
    plugins.Reload()
    for tag in plugins.Tags()["tensors"]:
        if plugins.SummaryMetadata(tag).plugin_data.plugin_name == "text":
            texts[tag] = tensor_util.make_ndarray(plugins.Tensors(tag)[0].tensor_proto).reshape(-1)[0].decode()
    return scalars, texts


def as_float32(numbers: dict[str, float]) -> dict[str, float]:
    """TensorBoard's scalars are float32: what results.json's numbers read back as."""
    return {key: float(np.float32(value)) for key, value in numbers.items()}


def test_tensorboard_holds_a_sweep_folder_with_one_run_per_job_and_the_same_numbers(sweep):
    root, sweep_dir, jobs = sweep
    logs = root / "outputs" / "tensorboard" / sweep_dir.name
    assert sorted(p.name for p in logs.iterdir()) == ["0_oracle", "1_static"]
    for job in jobs.values():
        scalars, texts = _tensorboard(logs / job.name)
        assert scalars == as_float32(logged_numbers(job))
        assert "num_samples: 3" in texts["config/text_summary"]
        assert texts["results.md/text_summary"] == (job / "results.md").read_text()
        assert (logs / job.name / "artifacts" / "results.json").read_bytes() == (job / "results.json").read_bytes()


def _wandb_records(run_dir: Path) -> dict:
    from wandb.proto import wandb_internal_pb2
    from wandb.sdk.internal import datastore

    (path,) = run_dir.glob("run-*.wandb")
    store = datastore.DataStore()
    store.open_for_scan(str(path))
    out: dict = {"summary": {}, "artifacts": []}
    while (data := store.scan_data()) is not None:
        record = wandb_internal_pb2.Record()
        record.ParseFromString(data)
        kind = record.WhichOneof("record_type")
        if kind == "run":
            out["run"] = record.run
            out["config"] = {item.key: json.loads(item.value_json) for item in record.run.config.update}
        elif kind == "summary":
            out["summary"].update({item.key: json.loads(item.value_json) for item in record.summary.update if item.key})
        elif kind == "artifact":
            out["artifacts"].append(record.artifact)
        elif kind == "exit":
            out["exit_code"] = record.exit.exit_code
    return out


def test_wandb_offline_runs_carry_the_config_the_same_numbers_and_the_report_artifact(sweep):
    root, sweep_dir, jobs = sweep
    runs = {}
    for folder in (root / "outputs" / "wandb").glob("offline-run-*"):
        records = _wandb_records(folder)
        runs[records["run"].display_name] = records
    assert sorted(runs) == ["0_oracle", "1_static"]
    for model, job in jobs.items():
        records = runs[job.name]
        assert records["run"].project == "wfeval" and records["run"].run_group == f"wfeval-sweep-{sweep_dir.name}"
        assert records["config"]["benchmark"]["num_samples"] == 3 and records["exit_code"] == 0
        assert model in records["run"].tags
        logged = {k: v for k, v in records["summary"].items() if not k.startswith(("_", "wfeval/"))}
        assert logged == logged_numbers(job)
        assert records["summary"]["wfeval/status"] == "completed"
        (artifact,) = records["artifacts"]
        contents = {entry.path: entry.digest for entry in artifact.manifest.contents}
        md5 = base64.b64encode(hashlib.md5((job / "results.json").read_bytes()).digest()).decode()
        assert artifact.type == "wfeval-report" and contents["results.json"] == md5 and "report.html" in contents


def test_a_failed_sweep_job_is_logged_as_failed_beside_the_completed_one(tmp_path, empty_mlflow_db):
    new_store(empty_mlflow_db, tmp_path / "mlflow.db")
    proc = run_cli(["-m", f"hydra.searchpath=[{SUPPORT_CONF}]", "model=flaky_oracle", "model.fail_on=[1]",
                    "run.fail_on_error=1,null", "run.batch_size=1", "benchmark.num_samples=3", "tracker=mlflow",
                    "metric=[generated_rate]", f"run.store_dir={tmp_path / 'store'}", "run.progress=off",
                    f"hydra.callbacks.wfeval_mlflow.tracking_uri=sqlite:///{tmp_path / 'mlflow.db'}"],
                   cwd=tmp_path, env=cli_env(MLFLOW_TRACKING_URI="/nonexistent/not-used"))
    assert proc.returncode == 1 and "1 sweep job(s) failed" in proc.stderr and "could not log" not in proc.stderr
    sweep_dir = only_run_dir(tmp_path / "outputs" / "multirun")
    client = mlflow_client(tmp_path / "mlflow.db")
    experiment = client.get_experiment_by_name(f"wfeval-sweep-{sweep_dir.name}")
    runs = {r.info.run_name: r for r in client.search_runs([experiment.experiment_id])}
    stopped, finished = runs["0_flaky_oracle"], runs["1_flaky_oracle"]
    assert stopped.info.status == "FAILED" and stopped.data.tags["wfeval.status"] == "failed"
    assert "fail_on_error" in stopped.data.tags["wfeval.error"] and not stopped.data.metrics  # no number from a stopped run
    assert finished.info.status == "FINISHED" and finished.data.metrics == expected_numbers(sweep_dir / "1_flaky_oracle")
    assert finished.data.metrics["gridworld.generated_rate/value"] == pytest.approx(2 / 3)


def test_any_run_folder_can_be_logged_afterwards_into_the_default_experiment(sweep, tmp_path, empty_mlflow_db):
    from wfeval.trackers.mlflow_tracker import MLflowTracker
    from wfeval.trackers.record import record_of

    _, _, jobs = sweep
    new_store(empty_mlflow_db, tmp_path / "mlflow.db")
    record = record_of(jobs["static"])  # outside a sweep: experiment "wfeval", config from the folder's .hydra/
    assert record.experiment == "wfeval" and record.config["benchmark"]["num_samples"] == 3
    MLflowTracker(tracking_uri=f"sqlite:///{tmp_path / 'mlflow.db'}").log(record)
    client = mlflow_client(tmp_path / "mlflow.db")
    (run,) = client.search_runs([client.get_experiment_by_name("wfeval").experiment_id])
    assert run.info.run_name == "1_static" and run.data.metrics == logged_numbers(jobs["static"])


@pytest.mark.parametrize("tracker,module,package", [("mlflow", "mlflow", "mlflow-skinny"),
                                                    ("tensorboard", "tensorboard", "tensorboard"),
                                                    ("wandb", "wandb", "wandb")])
def test_a_missing_tracker_package_exits_2_naming_the_extra_before_anything_runs(tmp_path, tracker, module, package,
                                                                                 monkeypatch):
    monkeypatch.setitem(sys.modules, module, None)  # not installed: its import fails
    proc = run_cli([f"tracker={tracker}", f"run.store_dir={tmp_path / 'store'}"], cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.strip() == (
        f"Config error: tracker={tracker} needs the '{module}' package, which is not installed. Install the optional "
        f"extra: pip install 'wfeval[trackers]' (MLflow, TensorBoard and W&B), or only pip install {package}. A run "
        f"without tracker={tracker} needs none of them.")
    assert not (tmp_path / "outputs").exists() and not (tmp_path / "store").exists()  # nothing ran


def test_mlflows_file_store_is_refused_before_the_run_unless_the_caller_opted_in(tmp_path, monkeypatch):
    """MLflow 3 opens its file store only with MLFLOW_ALLOW_FILE_STORE=true: wfeval says so and never sets it."""
    monkeypatch.delenv("MLFLOW_ALLOW_FILE_STORE", raising=False)
    common = ["tracker=mlflow", "benchmark.num_samples=2", "metric=[psnr]", f"run.store_dir={tmp_path / 'store'}",
              "run.progress=off", "run.report=false", f"hydra.callbacks.wfeval_mlflow.tracking_uri={tmp_path / 'mlruns'}"]
    proc = run_cli(common, cwd=tmp_path, env=cli_env())
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert proc.stderr.strip() == (
        f"Config error: tracker=mlflow: tracking_uri {(tmp_path / 'mlruns').as_uri()} is MLflow's file store, which "
        "MLflow 3 refuses unless the environment sets MLFLOW_ALLOW_FILE_STORE=true. Set it where you start the run "
        "(MLFLOW_ALLOW_FILE_STORE=true python -m wfeval ...), or use MLflow's database store: leave tracking_uri "
        "unset (sqlite:///outputs/mlflow.db) or give a sqlite:/// URI.")
    assert not (tmp_path / "outputs").exists()
    proc = run_cli(common, cwd=tmp_path, env=cli_env(MLFLOW_ALLOW_FILE_STORE="true"))
    assert proc.returncode == 0 and "could not log" not in proc.stderr, proc.stderr[-2000:]
    assert "MLFLOW_ALLOW_FILE_STORE" not in os.environ  # wfeval set nothing in the process
    assert len(list((tmp_path / "mlruns").glob("*/*/meta.yaml"))) == 1  # one run in the file store


def test_a_probing_run_logs_each_state_variable_and_each_horizon(tmp_path, empty_mlflow_db):
    """Per variable: the mean of its per-sample scores (metrics.jsonl); per horizon: imagined_probe_r2_k<k>."""
    new_store(empty_mlflow_db, tmp_path / "mlflow.db")
    proc = run_cli(["task=probing", "model=state_oracle", "model.predictor=static", "benchmark.num_samples=4",
                    "tracker=mlflow", f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false",
                    f"hydra.run.dir={tmp_path / 'run'}",
                    f"hydra.callbacks.wfeval_mlflow.tracking_uri=sqlite:///{tmp_path / 'mlflow.db'}"], cwd=tmp_path)
    assert proc.returncode == 0 and "could not log" not in proc.stderr, proc.stderr[-2000:]
    rows = [json.loads(line) for line in (tmp_path / "run" / "metrics.jsonl").read_text().splitlines()]
    client = mlflow_client(tmp_path / "mlflow.db")
    (run,) = client.search_runs([client.get_experiment_by_name("wfeval").experiment_id])
    logged = run.data.metrics
    for metric in ("probe_r2", "imagined_probe_r2_k4"):
        scores = [r["components"] for r in rows if r["metric_id"] == metric and r["diagnostics"]["status"] == "ok"]
        assert len(scores) == 4
        for variable in ("agent_row", "agent_col", "object_row", "object_col"):
            expected = sum(s[variable] for s in scores) / len(scores)
            assert logged[f"gridworld.{metric}/variable/{variable}"] == pytest.approx(expected, rel=1e-12)
    horizons = {int(k.split("_k")[1].split("/")[0]) for k in logged if k.startswith("gridworld.imagined_probe_r2_k")
                and k.endswith("/value")}
    assert horizons == {1, 2, 4, 8, 16}


def test_a_database_store_without_sqlalchemy_is_refused_naming_the_trackers_extra(tmp_path, monkeypatch):
    from wfeval.config.errors import ConfigError
    from wfeval.trackers.mlflow_tracker import MLflowTracker

    monkeypatch.setitem(sys.modules, "sqlalchemy", None)  # mlflow-skinny alone: no database store
    with pytest.raises(ConfigError) as caught:
        MLflowTracker(tracking_uri=f"sqlite:///{tmp_path / 'm.db'}")
    assert str(caught.value) == (
        f"tracker=mlflow with tracking_uri sqlite:///{tmp_path / 'm.db'} (MLflow's database store) needs the "
        "'sqlalchemy' package, which is not installed: pip install 'wfeval[trackers]'")
    assert not (tmp_path / "m.db").exists()
