"""Inverse-dynamics models: deterministic training on the family's own episodes (never an evaluation
seed), the shipped IDMs pinned and verified, the refusals of the provider, and an IDM trained on the
split of a dataset folder the user names, scoring continuous actions by R²."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from tests.conftest import ROOT, cli_env, compose, run_cli, run_python
from wfeval.api import GenerationRequest
from wfeval.pipeline import build
from wfeval.recipes.idm import files
from wfeval.recipes.idm.provider import IDMProvider, applies_to, applies_to_benchmark
from wfeval.storage.artifacts import ArtifactStore

TINY = {"seed": 7001, "store_dir": None, "data": {"episodes": 6, "steps": 15, "seed": 7001, "validation_episodes": 3,
                                                  "validation_fraction": 0.2},
        "net": {"channels": 8, "patch": 8}, "train": {"steps": 25, "batch_size": 16, "lr": 0.003,
                                                      "weight_decay": 0.0, "seed": 0, "threads": 1, "log_every": 25}}


def _train(tmp_path: Path, name: str, bench=None, **data) -> dict:
    from wfeval.cli.train_idm import run

    cfg = {**TINY, "out": str(tmp_path / name), "store_dir": str(tmp_path / "store"),
           "data": {**TINY["data"], **data}}
    return run(cfg, bench or build.build_benchmark(compose()), log=lambda *_: None)


def test_training_is_deterministic_and_the_sidecar_says_what_it_was_trained_on(tmp_path):
    first, again = _train(tmp_path, "a"), _train(tmp_path, "b")
    assert first["weights_sha256"] == again["weights_sha256"]
    data = first["data"]
    assert data["evaluation_seeds_excluded"] >= 4096 and data["seeds"] == [7001, 7002]
    assert len(data["sources"]) == 6 + 3 and data["seed_namespace"].startswith("wfeval.recipes/gridworld/")
    bench = build.build_benchmark(compose())
    assert not {str(bench._episode_seed(i)) for i in range(64)} & set(data["sources"])
    assert first["applies_to"] == applies_to_benchmark(bench)
    assert first["heldout"]["metric"] == "accuracy" and first["heldout"]["transitions"] == 3 * 15


def test_the_shipped_idms_are_pinned_verified_and_above_chance():
    assert set(files.SHIPPED) == {"gridworld", "atari_pong", "atari_breakout", "atari_boxing", "crafter", "pusht"}
    for name, folder in files.shipped().items():
        _, meta = files.read_sidecar(folder, files.SHIPPED[name])
        assert meta["heldout"]["value"] > meta["heldout"]["majority"] + 0.1, (name, meta["heldout"])
        assert meta["benchmark"] == name and meta["data"]["evaluation_seeds_excluded"] > 0


def test_a_changed_shipped_file_is_never_used(tmp_path):
    copy = tmp_path / "gridworld"
    shutil.copytree(files.SHIPPED_DIR / "gridworld", copy)
    weights = copy / files.WEIGHTS
    data = bytearray(weights.read_bytes())
    data[-100] ^= 1
    weights.write_bytes(bytes(data))
    with pytest.raises(files.CheckpointError, match="sha256"):
        files.load(copy, files.SHIPPED["gridworld"])


def _gridworld_request(**metadata) -> GenerationRequest:
    bench = build.build_benchmark(compose(["benchmark.num_samples=1"]))
    cfg = compose()
    [request] = bench.requests(store=ArtifactStore(Path("/tmp") / "wfeval-idm-test-store"),
                               task=build.build_task(cfg), protocol=build.build_protocol(cfg))
    return GenerationRequest(**{**request.__dict__, "metadata": {**request.metadata, **metadata}})


def test_the_provider_serves_the_shipped_idm_and_refuses_a_training_episode():
    provider = IDMProvider()
    request = _gridworld_request()
    idm, why = provider.for_request(request)
    assert why is None and idm.name == "gridworld" and idm.pinned
    trained_on = int(idm.meta["data"]["sources"][0])
    idm, why = provider.for_request(_gridworld_request(episode_seed=trained_on))
    assert idm is None and "trained or validated on this sample's episode" in why
    other = GenerationRequest(**{**request.__dict__, "metadata": {"world": {"spec": {**request.metadata["world"]["spec"],
                                                                                       "cell": 4}}}})
    idm, why = provider.for_request(other)
    assert idm is None and "no shipped inverse-dynamics model for this gridworld configuration" in why
    assert applies_to(GenerationRequest(sample_id="x")) is None


def test_a_stored_videos_actions_are_computed_once_per_idm_and_content_and_never_for_unnamed_weights(monkeypatch):
    """The reference video every model's run scores (the ceiling) is read by the IDM once per process: the
    same actions, keyed by the sidecar (weights sha256 included) and the video's verified content."""
    import collections

    import numpy as np

    from wfeval.recipes.idm import provider
    from wfeval.storage.artifacts import read_array

    request = _gridworld_request()
    ref = request.references["video"]
    video = read_array(ref)
    calls = []
    real = provider.LoadedIDM.predict
    monkeypatch.setattr(provider, "_STORED", collections.OrderedDict())
    monkeypatch.setattr(provider.LoadedIDM, "predict", lambda self, v: calls.append(1) or real(self, v))
    idm = IDMProvider().for_request(request)[0]
    first = idm.predict_stored(video, ref.sha256)
    first[:] = -1  # the caller's copy: the stored actions stay
    again = IDMProvider().for_request(request)[0].predict_stored(video, ref.sha256)  # another run's provider
    np.testing.assert_array_equal(again, real(idm, video))
    assert len(calls) == 1 and list(provider._STORED) == [(idm._meta_sha256, ref.sha256)]
    unnamed = provider.LoadedIDM(idm.net, {**idm.meta, "weights_sha256": None}, "unnamed", False)
    for _ in range(2):  # weights no sidecar names: computed every time
        np.testing.assert_array_equal(unnamed.predict_stored(video, ref.sha256), again)
    assert len(calls) == 3 and len(provider._STORED) == 1


def _split_dataset(root: Path) -> Path:
    from wfeval_test_datasets import episodes, write_folder

    write_folder(root, episodes(10), horizon=8)
    lines = [json.loads(line) for line in (root / "manifest.jsonl").read_text().splitlines()]
    for i, line in enumerate(lines):
        line["split"] = "train" if int(line["sample_id"][8:14]) < 7 else "test"
    (root / "manifest.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    info = json.loads((root / "dataset.json").read_text())
    (root / "dataset.json").write_text(json.dumps({**info, "splits": ["train", "test"]}))
    return root


def test_an_idm_trained_on_a_named_split_scores_continuous_actions_by_r2(tmp_path):
    data = _split_dataset(tmp_path / "squares")
    train = ["benchmark=folder", f"benchmark.dataset_root={data}", "benchmark.split=train"]

    trained = run_python(["-m", "wfeval.recipes.train_idm", *train, f"out={tmp_path / 'idm'}",
                          f"store_dir={tmp_path / 'store'}", "train.steps=150", "net.channels=8"],
                         cwd=ROOT, env=cli_env(), timeout=600)
    assert trained.returncode == 0, trained.stderr
    meta = json.loads((tmp_path / "idm" / files.SIDECAR).read_text())
    assert meta["heldout"]["metric"] == "r2" and meta["action_space"]["shape"] == [2]
    assert meta["data"]["split"] == "train" and meta["heldout"]["value"] > 0.3, meta["heldout"]
    run = run_cli(["benchmark=folder", f"benchmark.dataset_root={data}", "benchmark.split=test",
                   "model=python", "model.object._target_=wfeval_test_datasets.ShiftedReference", "+model.object.shift=0",
                   "metric=[idm_accuracy]", f"metric.idm_accuracy.idm.checkpoint={tmp_path / 'idm'}",
                   f"run.store_dir={tmp_path / 'store'}", f"hydra.run.dir={tmp_path / 'run'}"], cwd=ROOT)
    assert run.returncode == 0, run.stderr
    agg = json.loads((tmp_path / "run" / "results.json").read_text())["results"]["squares.idm_accuracy"]
    assert agg["valid"] and not agg["diagnostics"]["idm"]["pinned"]
    assert abs(agg["diagnostics"]["chance"]) < 0.2, agg["diagnostics"]  # the still frame: no roll to read
    assert agg["diagnostics"]["value"] == pytest.approx(agg["diagnostics"]["ceiling"])  # the reference itself
    # the training split's samples are refused: the IDM was trained on them
    again = run_cli(["benchmark=folder", f"benchmark.dataset_root={data}",
                     "benchmark.split=train", "model=python", "model.object._target_=wfeval_test_datasets.ShiftedReference",
                     "+model.object.shift=0", "metric=[idm_accuracy]",
                     f"metric.idm_accuracy.idm.checkpoint={tmp_path / 'idm'}", f"run.store_dir={tmp_path / 'store'}",
                     f"hydra.run.dir={tmp_path / 'run2'}"], cwd=ROOT)
    assert again.returncode == 0, again.stderr
    skipped = json.loads((tmp_path / "run2" / "results.json").read_text())["results"]["squares.idm_accuracy"]
    assert skipped["n_valid"] == 0 and "trained or validated on this sample" in json.dumps(skipped["skip_breakdown"]) + \
        (tmp_path / "run2" / "metrics.jsonl").read_text()


def test_a_missing_checkpoint_is_a_config_error_naming_the_file(tmp_path):
    done = run_cli(["task=controllability", f"+metric.idm_accuracy.idm.checkpoint={tmp_path / 'nothing'}",
                    f"run.store_dir={tmp_path / 'store'}", f"hydra.run.dir={tmp_path / 'run'}"], cwd=ROOT)
    assert done.returncode == 2 and "idm.pt" in done.stderr and "Traceback" not in done.stderr
