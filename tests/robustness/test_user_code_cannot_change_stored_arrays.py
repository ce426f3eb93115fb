"""Output changed after the contract: nothing wfeval hands to user code -- a policy's frame, a model's
own step output, a metric's arrays, a command program's input file -- can change what was stored and
scored. Each case states the number that must appear (the oracle stays exact)."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pytest

from tests.conftest import read_jsonl
from tests.robustness._run import wfeval

POLICY = "tests.robustness._models"


def test_a_policy_zeroing_the_frame_in_place_cannot_change_the_oracles_psnr(monkeypatch, capsys, tmp_path):
    ran = wfeval(monkeypatch, capsys, tmp_path, "protocol=closed_loop", "policy=user",
                 f"policy._target_={POLICY}.ZeroingPolicy", "metric=[psnr,ssim]")
    assert ran.code == 0, ran.err
    assert ran.value("gridworld.psnr") == 100.0 and ran.results["gridworld.psnr"]["n_valid"] == 3
    assert ran.value("gridworld.ssim") == 1.0
    assert ran.table_line("gridworld.psnr").split()[1:6] == ["100", "dB", "[100,", "100]", "3/3"]


def test_the_frame_a_policy_zeroed_at_step_0_is_stored_as_the_initial_frame(monkeypatch, capsys, tmp_path):
    from wfeval.api import ArtifactRef
    from wfeval.storage.artifacts import read_array

    ran = wfeval(monkeypatch, capsys, tmp_path, "protocol=closed_loop", "policy=user",
                 f"policy._target_={POLICY}.ZeroingPolicy", "metric=[generated_rate]", samples=1)
    assert ran.code == 0, ran.err
    video = read_array(ArtifactRef.from_dict(ran.generations()[0]["artifacts"]["generated_video"]))
    assert video[0].any() and all(frame.any() for frame in video)  # no frame is the zeroed one


def test_a_model_reusing_its_step_buffer_cannot_overwrite_earlier_frames(monkeypatch, capsys, tmp_path):
    ran = wfeval(monkeypatch, capsys, tmp_path, "protocol=autoregressive", "model=python",
                 f"model.object._target_={POLICY}.BufferReusingModel", "metric=[psnr]")
    assert ran.code == 0, ran.err
    assert ran.value("gridworld.psnr") == 100.0  # every frame is the one the step returned, not the last


def test_a_metric_writing_into_the_video_it_reads_fails_its_own_rows_and_psnr_stays_exact(monkeypatch, capsys,
                                                                                         tmp_path):
    ran = wfeval(monkeypatch, capsys, tmp_path, "metric=[mutating,psnr,ssim]", searchpath=True)
    assert ran.code == 0, ran.err
    mutating = ran.results["gridworld.mutating"]
    assert mutating["n_valid"] == 0 and mutating["diagnostics"]["status_counts"]["error"] == 3
    rows = [r for r in read_jsonl(ran.run_dir / "metrics.jsonl") if r["metric_id"] == "mutating"]
    assert len(rows) == 3 and all("read-only" in json.dumps(r) for r in rows)
    assert ran.value("gridworld.psnr") == 100.0 and ran.value("gridworld.ssim") == 1.0


def test_the_step_output_wfeval_keeps_is_its_own_read_only_copy():
    from wfeval.models.protocol import StepOutput, check_step_output

    buffer = np.full((2, 4, 4, 3), 7, np.uint8)
    frames = check_step_output(StepOutput(None, buffer), 2, "model")
    buffer[:] = 0
    assert frames.sum() == 2 * 4 * 4 * 3 * 7 and not frames.flags.writeable
    with pytest.raises(ValueError, match="read-only"):
        frames[0, 0, 0, 0] = 1


def test_arrays_shared_by_the_metrics_of_a_block_are_read_only():
    from wfeval.api import ArtifactRef
    from wfeval.storage.artifacts import preloaded, read_array

    array = np.arange(12, dtype=np.uint8)
    ref = ArtifactRef(kind="array", uri="/nonexistent", sha256="ab" * 32, media_type="application/x-npy",
                      shape=(12,), dtype="uint8")
    with preloaded({ref.sha256: array}):
        with pytest.raises(ValueError, match="read-only"):
            read_array(ref)[:] = 0
    assert array.tolist() == list(range(12))


def test_a_command_program_writing_into_its_input_file_cannot_change_the_store(tmp_path):
    """The program gets a copy, never the store's object, and a copy it spoiled is written afresh."""
    from wfeval.models.command import _plain_npy
    from wfeval.storage.artifacts import ArtifactStore, read_array

    store = ArtifactStore(tmp_path / "store", codec="npy")  # plain .npy objects: np.load-able as they are
    frame = np.full((4, 4, 3), 9, np.uint8)
    ref = store.put_array(frame, kind="image")
    path = _plain_npy(ref)
    assert path != ref.uri  # a copy, not the stored object
    np.save(path, np.zeros((4, 4, 3), np.uint8))  # the program overwrites its input
    assert read_array(ref).sum() == frame.sum()  # the store is untouched
    again = _plain_npy(ref)
    assert hashlib.sha256(open(again, "rb").read()).hexdigest() == ref.sha256  # the next batch gets the truth
