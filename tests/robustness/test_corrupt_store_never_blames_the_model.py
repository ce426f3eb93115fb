"""A corrupt store blames the model: corrupt stored *inputs and references* are rebuilt from their
source (the benchmark puts them again on every run, and an object found corrupt is rewritten), and a
stored object found corrupt or missing while a model or a metric reads it fails the run as a storage
fault -- exit 1, the path, what to do -- never "generation failed" on the model, never a metric
quietly left with 0 valid samples."""

from __future__ import annotations

import numpy as np

from tests.robustness._run import wfeval
from wfeval.storage.artifacts import ArtifactStore, read_array


def _flip_every_object(store_dir):
    """Overwrite every stored object with other bytes of the same length (as a bad disk would)."""
    objects = sorted((store_dir / "objects").rglob("*.npy*"))
    for path in objects:
        data = bytearray(path.read_bytes())
        data[len(data) // 2] ^= 0xFF
        path.write_bytes(bytes(data))
    return len(objects)


def test_a_rerun_over_a_corrupted_store_rebuilds_inputs_and_references_and_scores_exactly(monkeypatch, capsys,
                                                                                        tmp_path):
    first = wfeval(monkeypatch, capsys, tmp_path, "metric=[generated_rate,psnr]", name="first")
    assert first.code == 0 and first.value("gridworld.psnr") == 100.0
    assert _flip_every_object(tmp_path / "store") >= 6  # inputs, references and outputs of 3 samples
    again = wfeval(monkeypatch, capsys, tmp_path, "metric=[generated_rate,psnr]", name="again")
    assert again.code == 0, again.err
    assert "generation failed" not in again.out and all(g["status"] == "ok" for g in again.generations())
    assert again.value("gridworld.psnr") == 100.0 and again.results["gridworld.psnr"]["n_valid"] == 3
    assert sum(again.counts()) == 3  # (an oracle's outputs are its references: rebuilt by the benchmark too)


def test_put_array_rewrites_an_object_found_corrupt_and_keeps_a_sound_one(tmp_path):
    store = ArtifactStore(tmp_path / "store")
    frame = np.arange(48, dtype=np.uint8).reshape(4, 4, 3)
    ref = store.put_array(frame, kind="image")
    sound = open(ref.uri, "rb").read()
    _flip_every_object(tmp_path / "store")
    again = store.put_array(frame, kind="image")  # the benchmark puts its input again
    assert again.uri == ref.uri and open(ref.uri, "rb").read() == sound
    assert np.array_equal(read_array(again), frame)


def _corrupt_after_build(monkeypatch, which):
    """Corrupt the stored ``which`` (input image / reference video) after the benchmark put it."""
    from wfeval.pipeline import plan

    real = plan.plan_run

    def plan_run(cfg, store, spool_dir=None):
        built = real(cfg, store, spool_dir)
        for request in built.requests:
            ref = request.inputs["image"] if which == "input" else request.references["video"]
            data = bytearray(open(ref.uri, "rb").read())
            data[len(data) // 2] ^= 0xFF
            open(ref.uri, "wb").write(bytes(data))
            break
        return built

    monkeypatch.setattr(plan, "plan_run", plan_run)
    from wfeval.pipeline import runner

    monkeypatch.setattr(runner, "plan_run", plan_run)


def test_an_input_corrupted_during_the_run_is_a_storage_fault_not_a_failed_generation(monkeypatch, capsys, tmp_path):
    _corrupt_after_build(monkeypatch, "input")
    ran = wfeval(monkeypatch, capsys, tmp_path, "metric=[psnr]", "model=static")  # it reads the initial frame
    assert ran.code == 1, ran.err
    assert "a stored object is corrupt or missing" in ran.err and "objects/" in ran.err
    assert "run the same command again" in ran.err
    manifest = ran.manifest
    assert manifest["status"] == "failed" and manifest["failure_kind"] == "storage"
    assert not any(g["status"] == "failed" for g in ran.generations()) if (ran.run_dir / "generations.jsonl"
                                                                           ).exists() else True


def test_a_reference_corrupted_during_the_run_is_a_storage_fault_not_a_metric_error(monkeypatch, capsys, tmp_path):
    _corrupt_after_build(monkeypatch, "reference")
    ran = wfeval(monkeypatch, capsys, tmp_path, "metric=[psnr]", "model=static")
    assert ran.code == 1, ran.err
    assert "a stored object is corrupt or missing" in ran.err
    assert ran.manifest["failure_kind"] == "storage"
    assert not (ran.run_dir / "results.json").exists()  # no PSNR with 2 of 3 samples left


def test_a_rescore_of_a_run_whose_objects_were_deleted_is_a_storage_fault(monkeypatch, capsys, tmp_path):
    first = wfeval(monkeypatch, capsys, tmp_path, "metric=[psnr]", name="first")
    for path in (tmp_path / "store" / "objects").rglob("*.npy*"):
        path.unlink()
    again = wfeval(monkeypatch, capsys, tmp_path, "metric=[psnr]", f"run.from_run={first.run_dir}",
                   "run.recompute=all", name="again")  # (else the cached rows of that content serve)
    assert again.code == 1 and "a stored object is corrupt or missing" in again.err, again.err
    assert again.manifest["failure_kind"] == "storage"


def test_a_changed_dataset_file_stays_the_datas_problem_on_its_own_sample(monkeypatch, capsys, tmp_path):
    """A dataset file read in place is not the store's: its sample is skipped with the file named."""
    import json
    import shutil

    from tests.conftest import ROOT

    data = tmp_path / "data"
    shutil.copytree(ROOT / "examples" / "datasets" / "gridworld_tiny", data)
    first = wfeval(monkeypatch, capsys, tmp_path, "benchmark=folder", f"benchmark.dataset_root={data}",
                   "model=static", "metric=[psnr]", name="first", samples=None)
    assert first.code == 0, first.err
    video = data / json.loads((data / "manifest.jsonl").read_text().splitlines()[0])["reference_video"]
    video.write_bytes(video.read_bytes()[: len(video.read_bytes()) // 2])  # truncated after the run read it
    again = wfeval(monkeypatch, capsys, tmp_path, "metric=[psnr]", f"run.from_run={first.run_dir}",
                   "run.recompute=all", name="again", samples=None)
    assert again.code == 0, again.err
    psnr = again.results["gridworld_tiny.psnr"]
    assert (psnr["n_valid"], psnr["n_total"]) == (3, 4)  # the other 3 of 4 samples still count
    assert "3/4 (75%)" in again.table_line("gridworld_tiny.psnr")
