"""docs/dataset-readers.md runs as written, on the example datasets in examples/datasets/."""

from __future__ import annotations

import json

from tests.benchmarks._doc_runner import run_doc


def _results(run) -> dict:
    return json.loads((run / "results.json").read_text())


def test_dataset_readers_page(tmp_path, monkeypatch):
    lerobot, hdf5, pairs, minari, memory, recorded = (_results(run) for run in run_doc("dataset-readers.md",
                                                                                       tmp_path, monkeypatch))
    assert lerobot["results"]["lerobot.psnr"]["normalized_stats"]["mean"] == 100.0
    assert lerobot["benchmark"]["action_space"]["names"] == ["vx", "vy"]
    static = hdf5["results"]["hdf5.psnr"]
    assert static["n_valid"] == 4 and 10 < static["normalized_stats"]["mean"] < 40
    assert pairs["protocol"]["driver"] == "autoregressive"
    assert pairs["results"]["video_actions.ssim"]["normalized_stats"]["mean"] == 1.0
    oracle = minari["results"]["square_minari.psnr"]  # the reference is the decoded JPEGs themselves
    assert oracle["n_valid"] == 4 and oracle["normalized_stats"]["mean"] == 100.0
    assert minari["benchmark"]["action_space"]["low"] == [-1.0, -1.0]  # metadata.json's Box
    # task=memory on pan.hdf5: its 4 samples hold revisits of the recorded pose; the oracle is exact
    for metric in ("hdf5.revisit_error", "hdf5.reversibility_error"):
        assert memory["results"][metric]["n_valid"] == 4 and memory["results"][metric]["normalized_stats"]["mean"] == 0
    # gridworld episodes recorded by wfeval.recipes.data and written as a LeRobot dataset: 4 episodes of
    # 17 frames, one window of 1 + 8 frames each (stride 9); the oracle reproduces them exactly
    assert recorded["results"]["lerobot.psnr"]["n_valid"] == 4
    assert recorded["results"]["lerobot.psnr"]["normalized_stats"]["mean"] == 100.0
