"""`python -m wfeval.export_dataset` writes any benchmark as a dataset folder; the example is its output."""

from __future__ import annotations

import json

import numpy as np

from tests.benchmarks._folder_helpers import EXAMPLE, bad_dataset, lines
from wfeval.cli.export_dataset import main
from wfeval.io import read_image, read_video


def test_the_shipped_example_is_exactly_what_the_export_command_writes(tmp_path, capsys):
    out = tmp_path / "gw"
    assert main([str(out), "benchmark.num_samples=4", "--name", "gridworld_tiny"]) == 0
    assert "wrote 4 sample(s)" in capsys.readouterr().out
    assert lines(out) == lines(EXAMPLE)
    assert json.loads((out / "dataset.json").read_text()) == json.loads((EXAMPLE / "dataset.json").read_text())
    for row in lines(out):
        np.testing.assert_array_equal(read_image(out / row["initial_frame"]), read_image(EXAMPLE / row["initial_frame"]))
        np.testing.assert_array_equal(read_video(out / row["reference_video"]).frames,
                                      read_video(EXAMPLE / row["reference_video"]).frames)
    size = sum(p.stat().st_size for p in EXAMPLE.rglob("*") if p.is_file())
    assert size < 1_000_000


def test_refuses_a_non_empty_folder_unless_forced(tmp_path, capsys):
    out = tmp_path / "gw"
    out.mkdir()
    (out / "keep.txt").write_text("mine")
    assert main([str(out), "benchmark.num_samples=1"]) == 2
    err = capsys.readouterr().err
    assert "is not empty; add --force" in err and "overwrite=True" not in err  # the command's flag, not the API's
    assert main([str(out), "benchmark.num_samples=1", "--force", "--video-format", "npz"]) == 0
    assert not (out / "keep.txt").exists() and lines(out)[0]["reference_video"].endswith(".npz")


def test_config_errors_exit_2_and_a_folder_exports_its_readable_samples(tmp_path, capsys):
    assert main([str(tmp_path / "x"), "benchmark.num_sample=1"]) == 2
    assert "benchmark.num_sample" in capsys.readouterr().err
    bad = bad_dataset(tmp_path / "bad")
    assert main([str(tmp_path / "again"), "benchmark=folder", f"benchmark.dataset_root={bad}"]) == 0
    out = capsys.readouterr()
    # 2 unreadable samples and 3 refused lines (each a sample the data could not provide)
    assert "wrote 4 sample(s)" in out.out and "(5 unreadable left out)" in out.out
    assert "left out 'bad-missing': initial_frame 'frames/missing.png': file not found" in out.err
    assert [r["sample_id"] for r in lines(tmp_path / "again")] == [f"gridworld-test-0000{i}" for i in range(4)]
