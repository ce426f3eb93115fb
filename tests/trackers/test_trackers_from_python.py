"""``wfeval.evaluate(..., tracker=..., step=N)`` inside a training loop: ONE tracker run per training run,
a point per evaluation at the loop's step, read back by MLflow's client, TensorBoard's event
accumulator and W&B's own reader of the offline run file; and every override a call from Python
would ignore is refused with the reason. The expected numbers are the calls' own results.json."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import torch
import wfeval_test_live

import wfeval
from wfeval.config.errors import ConfigError

pytest.importorskip("mlflow")
pytest.importorskip("tensorboard")
pytest.importorskip("wandb")

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
                                      f"hydra.callbacks.wfeval_mlflow.tracking_uri={root / 'mlruns'}"])
            runs[step] = results.run_dir
    board.close()
    wandb_run.close()
    import wandb

    wandb.teardown()  # wandb put its in-process service in os.environ (WANDB_SERVICE): a later CLI in a
    os.environ.pop("WANDB_SERVICE", None)  # subprocess would log through it, relative to this process's folder
    mp.undo()
    yield root, runs


def _client(folder: Path, monkeypatch):
    from mlflow.tracking import MlflowClient

    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    return MlflowClient(tracking_uri=folder.as_uri())


def test_mlflow_shows_one_run_with_a_metric_history_at_the_loops_steps(training, monkeypatch):
    root, runs = training
    client = _client(root / "mlruns", monkeypatch)
    (run,) = client.search_runs([client.get_experiment_by_name("wfeval").experiment_id])
    assert run.info.status == "FINISHED" and run.info.run_name.startswith("shiftnet-")
    for key in ("gridworld.psnr/value", "gridworld.psnr/n_valid"):
        history = client.get_metric_history(run.info.run_id, key)
        assert [(m.step, m.value) for m in sorted(history, key=lambda m: m.step)] == [
            (step, _numbers(runs[step])[key]) for step in STEPS]
    values = [_numbers(runs[s])["gridworld.psnr/value"] for s in STEPS]
    assert values[0] < values[1] < values[2]  # the model trains: the curve rises
    assert run.data.params["benchmark.num_samples"] == "2" and run.data.tags["wfeval.step"] == "30"
    assert {a.path for a in client.list_artifacts(run.info.run_id, "wfeval")} == {f"wfeval/step_{s}" for s in STEPS}


def test_tensorboard_holds_one_run_folder_with_a_scalar_per_evaluation_at_its_step(training):
    from tensorboard.backend.event_processing.plugin_event_accumulator import EventAccumulator
    from tensorboard.util import tensor_util

    root, runs = training
    (folder,) = (root / "tb").iterdir()
    events = EventAccumulator(str(folder))
    events.Reload()
    points = [(e.step, float(tensor_util.make_ndarray(e.tensor_proto))) for e in events.Tensors("gridworld.psnr/value")]
    assert points == [(step, _numbers(runs[step])["gridworld.psnr/value"]) for step in STEPS]
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
    import mlflow

    root, _ = training
    monkeypatch.setenv("MLFLOW_ALLOW_FILE_STORE", "true")
    mlflow.set_tracking_uri((tmp_path / "mine").as_uri())
    try:
        with mlflow.start_run(run_name="my-training") as mine:
            mlflow.log_metric("loss", 0.5, step=7)
            results = wfeval.evaluate(model=wfeval_test_live.ShiftNet(offset=3.0), metrics=["psnr"], tracker="mlflow",
                                      step=7, run_dir=tmp_path / "run",
                                      overrides=["benchmark.num_samples=2", f"run.store_dir={root / 'store'}"])
    finally:
        mlflow.set_tracking_uri(None)
    client = _client(tmp_path / "mine", monkeypatch)
    (run,) = client.search_runs([client.get_experiment_by_name("Default").experiment_id])
    assert run.info.run_id == mine.info.run_id
    assert [(m.step, m.value) for m in client.get_metric_history(run.info.run_id, "gridworld.psnr/value")] == [
        (7, results["gridworld.psnr"].value)]
    assert run.data.metrics["loss"] == 0.5


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
