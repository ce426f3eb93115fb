"""``wfeval.evaluate(..., tracker=..., step=N)`` inside a training loop: ONE tracker run per training run,
a point per evaluation at the loop's step, read back by MLflow's client, TensorBoard's event
accumulator and W&B's own reader of the offline run file; and every override a call from Python
would ignore is refused with the reason. The expected numbers are the calls' own results.json."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import pytest
import torch
import wfeval_test_live

import wfeval

from tests.conftest import one_wandb_at_a_time, tracker_libraries
from wfeval.config.errors import ConfigError


@pytest.fixture(scope="module", autouse=True)
def _tracker_libraries():
    tracker_libraries()


STEPS = (10, 20, 30)


def _numbers(run_dir: Path) -> dict[str, float]:
    document = json.loads((run_dir / "results.json").read_text())
    agg = document["results"]["gridworld.psnr"]
    return {"gridworld.psnr/value": agg["diagnostics"]["value"], "gridworld.psnr/n_valid": float(agg["n_valid"])}


@pytest.fixture(scope="module")
def training(tmp_path_factory):
    """30 training steps, an evaluation every 10 with all three trackers (mlflow named by a string)."""
    from wfeval.trackers.tensorboard_tracker import TensorBoardTracker
    from wfeval.trackers.wandb_tracker import WandbTracker

    root = tmp_path_factory.mktemp("training")
    mp = pytest.MonkeyPatch()
    for name in ("WANDB_CONFIG_DIR", "WANDB_CACHE_DIR", "WANDB_DATA_DIR"):
        mp.setenv(name, str(root / "wandb-home"))
    mp.setenv("WANDB_SILENT", "true")
    with one_wandb_at_a_time(tmp_path_factory):  # wandb's service: one starting at a time across workers
        model = wfeval_test_live.ShiftNet(offset=40.0)
        optimiser = torch.optim.SGD(model.parameters(), lr=0.05)
        board, wandb_run = TensorBoardTracker(log_dir=str(root / "tb")), WandbTracker(dir=str(root / "wb"), run_name="train")
        runs = {}
        for step in range(1, 31):
            loss = model.offset ** 2
            optimiser.zero_grad()
            loss.backward()
            optimiser.step()
            if step % 10 == 0:
                results = wfeval.evaluate(
                    model=model, metrics=["psnr"], run_dir=root / "runs" / str(step), tracker=["mlflow", board, wandb_run],
                    step=step, overrides=["benchmark.num_samples=2", f"run.store_dir={root / 'store'}",
                                          f"hydra.callbacks.wfeval_mlflow.tracking_uri=sqlite:///{root / 'mlflow.db'}"])
                runs[step] = results.run_dir
        board.close()
        wandb_run.close()
        import wandb

        wandb.teardown()  # wandb put its in-process service in os.environ (WANDB_SERVICE): a later CLI in a
        os.environ.pop("WANDB_SERVICE", None)  # subprocess would log through it, relative to this process's folder
    mp.undo()
    yield root, runs


def _client(database: Path):
    from mlflow.tracking import MlflowClient

    return MlflowClient(tracking_uri=f"sqlite:///{database}")


def test_mlflow_shows_one_run_with_a_metric_history_at_the_loops_steps(training):
    root, runs = training
    client = _client(root / "mlflow.db")
    (run,) = client.search_runs([client.get_experiment_by_name("wfeval").experiment_id])
    assert run.info.status == "FINISHED" and run.info.run_name.startswith("shiftnet-")
    for key in ("gridworld.psnr/value", "gridworld.psnr/n_valid"):
        history = client.get_metric_history(run.info.run_id, key)
        assert [(m.step, m.value) for m in sorted(history, key=lambda m: m.step)] == [
            (step, _numbers(runs[step])[key]) for step in STEPS]
    values = [_numbers(runs[s])["gridworld.psnr/value"] for s in STEPS]
    assert values[0] < values[1] < values[2]  # the model trains: the curve rises
    assert run.data.params["wfeval.num_samples"] == "2" and run.data.tags["wfeval.step"] == "30"
    assert len(run.data.params) <= 20 and all(k.startswith("wfeval.") for k in run.data.params)
    assert {a.path for a in client.list_artifacts(run.info.run_id, "wfeval")} == {f"wfeval/step_{s}" for s in STEPS}


def test_tensorboard_holds_one_run_folder_with_a_scalar_per_evaluation_at_its_step(training):
    from tensorboard.backend.event_processing.event_accumulator import EventAccumulator

    root, runs = training
    (folder,) = (root / "tb").iterdir()
    events = EventAccumulator(str(folder))
    events.Reload()
    assert "gridworld.psnr/value" in events.Tags()["scalars"]
    assert all(tag.endswith("/text_summary") for tag in events.Tags()["tensors"])  # texts only, no scalar as a tensor
    points = [(e.step, e.value) for e in events.Scalars("gridworld.psnr/value")]  # TensorBoard scalars: float32
    assert points == [(step, float(np.float32(_numbers(runs[step])["gridworld.psnr/value"]))) for step in STEPS]
    assert sorted(p.name for p in (folder / "artifacts").iterdir()) == [f"step_{s}" for s in STEPS]


def test_wandb_offline_run_has_one_history_row_per_evaluation_at_its_step(training):
    from wandb.proto import wandb_internal_pb2
    from wandb.sdk.internal import datastore

    root, runs = training
    (folder,) = (root / "wb" / "wandb").glob("offline-run-*")
    (path,) = folder.glob("run-*.wandb")
    store = datastore.DataStore()
    store.open_for_scan(str(path))
    rows, name = [], None
    while (data := store.scan_data()) is not None:
        record = wandb_internal_pb2.Record()
        record.ParseFromString(data)
        if record.WhichOneof("record_type") == "history":
            rows.append({item.key or "/".join(item.nested_key): json.loads(item.value_json) for item in record.history.item})
        elif record.WhichOneof("record_type") == "run":
            name = record.run.display_name
    assert name == "train"
    assert [(row["_step"], row["gridworld.psnr/value"]) for row in rows] == [
        (step, _numbers(runs[step])["gridworld.psnr/value"]) for step in STEPS]


def test_inside_the_callers_mlflow_run_the_evaluation_sits_beside_the_training_loss(training, tmp_path, monkeypatch):
    """The documented pattern as a user runs it: MLflow's own default store, no environment variable set."""
    import mlflow

    root, _ = training
    for name in ("MLFLOW_ALLOW_FILE_STORE", "MLFLOW_TRACKING_URI"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)  # MLflow's default store: sqlite:///mlflow.db in the working folder
    mlflow.set_tracking_uri(None)
    try:
        with mlflow.start_run(run_name="my-training") as mine:
            mlflow.log_metric("loss", 0.5, step=7)
            results = wfeval.evaluate(model=wfeval_test_live.ShiftNet(offset=3.0), metrics=["psnr"], tracker="mlflow",
                                      step=7, run_dir=tmp_path / "run",
                                      overrides=["benchmark.num_samples=2", f"run.store_dir={root / 'store'}"])
    finally:
        mlflow.set_tracking_uri(None)
    assert "MLFLOW_ALLOW_FILE_STORE" not in os.environ  # wfeval set nothing in the caller's process
    client = _client(tmp_path / "mlflow.db")
    (run,) = client.search_runs([client.get_experiment_by_name("Default").experiment_id])
    assert run.info.run_id == mine.info.run_id
    assert [(m.step, m.value) for m in client.get_metric_history(run.info.run_id, "gridworld.psnr/value")] == [
        (7, results["gridworld.psnr"].value)]
    assert run.data.metrics["loss"] == 0.5
    # a handful of namespaced parameters, not every leaf of wfeval's config; the config as one artifact
    assert set(run.data.params) == {"wfeval.task", "wfeval.num_samples", "wfeval.seed", "wfeval.model",
                                    "wfeval.model_version", "wfeval.benchmark", "wfeval.protocol", "wfeval.metrics",
                                    "wfeval.version"}
    assert run.data.params["wfeval.model"] == "shiftnet" and run.data.params["wfeval.benchmark"] == "gridworld"
    local = client.download_artifacts(run.info.run_id, "wfeval/step_7/config.yaml", str(tmp_path / "dl"))
    assert "num_samples: 2" in Path(local).read_text()


@pytest.mark.parametrize("kwargs,words", [
    (dict(overrides=["tracker=mlflow"]), "'tracker=mlflow' has no effect through wfeval.evaluate: trackers are Hydra callbacks"),
    (dict(overrides=["+tracker=[mlflow,wandb]"]), "Pass it to the call instead: wfeval.evaluate(..., tracker='mlflow', step="),
    (dict(overrides=["hydra.run.dir=elsewhere"]), "'hydra.run.dir=elsewhere' has no effect through wfeval.evaluate"),
    (dict(overrides=["hydra.callbacks.wfeval_mlflow.tracking_uri=x"]), "Hydra's own settings (hydra.*) apply to a command-line job"),
    (dict(step=3), "step=3 is the training step a tracker logs at; without tracker= it has no effect"),
    (dict(tracker="mlflow"), "tracker= logs each evaluation at the training step of the caller: pass step="),
    (dict(tracker="mlfow", step=1), "tracker='mlfow' is not a tracker; the trackers are: mlflow, tensorboard, wandb"),
    (dict(tracker="mlflow", step=1, overrides=["hydra.callbacks.wfeval_mlflow.uri=x"]), "tracker=mlflow has no option uri"),
    (dict(tracker="mlflow", step=2.9), "step=2.9: the training step a tracker logs at is a non-negative int"),
    (dict(tracker="mlflow", step=True), "step=True: the training step a tracker logs at is a non-negative int"),
    (dict(tracker="mlflow", step=-1), "step=-1: the training step a tracker logs at is a non-negative int"),
    (dict(tracker="mlflow", step="3"), "step='3': the training step a tracker logs at is a non-negative int"),
    (dict(tracker="mlflow", step=1, overrides=["hydra.callbacks.wfeval_mlflow.tracking_uri=${oc.env:WFEVAL_NOPE_UNSET}"]),
     "tracker=mlflow: option tracking_uri (hydra.callbacks.wfeval_mlflow.tracking_uri) cannot be resolved: the "
     "environment variable WFEVAL_NOPE_UNSET is not set"),
])
def test_what_a_call_from_python_would_ignore_is_refused_before_anything_runs(tmp_path, kwargs, words, monkeypatch):
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("WFEVAL_NOPE_UNSET", raising=False)
    with pytest.raises(ConfigError) as caught:
        wfeval.evaluate(model=wfeval_test_live.ShiftNet(), metrics=["psnr"], **kwargs)
    assert words in str(caught.value)
    assert not (tmp_path / "outputs").exists()
