"""Absurd or unsafe inputs are the sample's input error (or, with benchmark.strict=true, stop the
run before generation), with limits a user can raise; nothing is decoded past a limit."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import ROOT, compose, read_jsonl
from wfeval.io import Limits, VideoReadError, load_array, read_image, read_video, write_video

EXAMPLE = ROOT / "examples" / "datasets" / "gridworld_tiny"
SMALL = Limits(max_frame_pixels=32 * 32, max_frames=5, max_video_pixels=4 * 32 * 32, max_array_bytes=10_000)


def _npy_header_only(path: Path, shape, dtype="uint8") -> Path:
    """A .npy whose header declares ``shape`` but holds no data (what a hostile file looks like)."""
    with path.open("wb") as handle:
        np.lib.format.write_array_header_1_0(handle, {"descr": np.dtype(dtype).str, "fortran_order": False,
                                                      "shape": tuple(shape)})
    return path


@pytest.mark.parametrize("shape, words", [((10 ** 6, 64, 64, 3), "exceeds the limit"),
                                          ((16, 12000, 12000, 3), "max_"),
                                          ((2 ** 40,), "max_array_bytes"),
                                          ((200_000, 2, 2, 3), "max_frames")])
def test_an_array_header_declaring_too_much_is_refused_before_reading(tmp_path, shape, words):
    path = _npy_header_only(tmp_path / "huge.npy", shape)
    with pytest.raises(VideoReadError, match=words) as info:
        load_array(path)
    assert str(path) in str(info.value)


def test_an_npz_member_declaring_too_much_is_refused(tmp_path):
    import zipfile

    member = _npy_header_only(tmp_path / "video.npy", (10 ** 5, 512, 512, 3))
    with zipfile.ZipFile(tmp_path / "huge.npz", "w") as archive:
        archive.write(member, "video.npy")
    with pytest.raises(VideoReadError, match="exceeds the limit"):
        load_array(tmp_path / "huge.npz")


@pytest.mark.parametrize("suffix", [".mkv", ".npy", ""])
def test_a_video_over_the_frame_limit_is_refused_naming_the_limit_to_raise(tmp_path, suffix):
    video = np.zeros((8, 16, 16, 3), np.uint8)
    path = write_video(tmp_path / f"v{suffix}", video, fps=8)
    with pytest.raises(VideoReadError, match="benchmark.limits.max_frames="):
        read_video(path, limits=SMALL)
    assert read_video(path, limits=Limits(max_frames=8)).frames.shape == (8, 16, 16, 3)  # raised: read


@pytest.mark.parametrize("suffix", [".png", ".npy"])
def test_an_image_over_the_pixel_limit_is_refused_before_decoding(tmp_path, suffix):
    from wfeval.io import write_image

    path = write_image(tmp_path / f"big{suffix}", np.zeros((40, 40, 3), np.uint8))
    with pytest.raises(VideoReadError, match="max_frame_pixels"):
        read_image(path, limits=SMALL)


def test_decoded_pixels_per_video_are_limited(tmp_path):
    path = write_video(tmp_path / "v.mkv", np.zeros((5, 32, 32, 3), np.uint8), fps=8)
    with pytest.raises(VideoReadError, match="decoded pixels 5,120 exceeds the limit of 4,096"):
        read_video(path, limits=SMALL)


@pytest.mark.parametrize("values, words", [({"max_frames": 0}, "positive integer"), ({"max_frame": 1}, "unknown"),
                                           ({"max_actions": -5}, "positive integer"),
                                           ({"max_frames": True}, "positive integer")])
def test_a_bad_limit_value_is_a_config_error(values, words):
    with pytest.raises(ValueError, match=words):
        Limits.from_mapping(values, "benchmark.limits")


# ---- the folder family --------------------------------------------------------------------------


def _dataset(tmp_path: Path, edit=None, n: int = 3) -> Path:
    root = tmp_path / "data"
    rows = []
    for line in (EXAMPLE / "manifest.jsonl").read_text().splitlines()[:n]:
        row = json.loads(line)
        for key in ("initial_frame", "reference_video"):
            (root / row[key]).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(EXAMPLE / row[key], root / row[key])
        rows.append(row)
    if edit:
        edit(root, rows)
    (root / "manifest.jsonl").write_text("".join(json.dumps(r, allow_nan=True) + "\n" for r in rows))
    return root


def _run(tmp_path: Path, root: Path, *overrides: str):
    from wfeval.pipeline.runner import run_from_config

    cfg = compose(["benchmark=folder", f"benchmark.dataset_root={root}", f"run.store_dir={tmp_path / 'store'}",
                   "run.progress=off", "metric=[generated_rate,psnr]", *overrides])
    return run_from_config(cfg, tmp_path / "run")


def _input_errors(tmp_path: Path) -> dict[str, str]:
    rows = read_jsonl(tmp_path / "run" / "generations.jsonl")
    return {r["request"]["sample_id"]: r["result"]["error"] for r in rows if r["result"]["stop_reason"] == "input_error"}


def _nan_action(root, rows):
    rows[1]["actions"][3] = float("nan")


def _inf_in_continuous_action(root, rows):
    rows[1]["actions"] = [[0.5, float("inf")]] * 15


def _too_many_actions(root, rows):
    rows[1]["actions"] = [0] * 100_001
    rows[1]["num_frames"] = 100_002


def _absurd_num_frames(root, rows):
    rows[1]["num_frames"] = 1_000_000_000


def _symlink_outside(root, rows):
    outside = root.parent / "outside.mkv"
    shutil.copy(root / rows[1]["reference_video"], outside)
    (root / rows[1]["reference_video"]).unlink()
    (root / rows[1]["reference_video"]).symlink_to(outside)


def _empty_video(root, rows):
    (root / rows[1]["reference_video"]).write_bytes(b"")


def _truncated_video(root, rows):
    path = root / rows[1]["reference_video"]
    path.write_bytes(path.read_bytes()[: path.stat().st_size // 2])


def _huge_png(root, rows):
    from wfeval.io import write_image

    write_image(root / "frames" / "big.png", np.zeros((80, 80, 3), np.uint8))
    rows[1]["initial_frame"] = "frames/big.png"


BAD_SAMPLES = [
    ("nan_action", _nan_action, (), "non-finite number (nan)"),
    ("inf_continuous_action", _inf_in_continuous_action, (), "non-finite number (inf)"),
    ("over_100k_actions", _too_many_actions, (), "100,001 actions exceed the limit of 100,000"),
    ("num_frames_1e9", _absurd_num_frames, (), "num_frames 1,000,000,000 exceeds the limit"),
    ("symlink_leaving_the_root", _symlink_outside, (), "outside the dataset root"),
    ("empty_video", _empty_video, (), "empty file (0 bytes)"),
    ("truncated_video", _truncated_video, (), "reference_video"),
    ("png_over_the_pixel_limit", _huge_png, ("benchmark.limits.max_frame_pixels=4096",), "max_frame_pixels"),
]


@pytest.mark.parametrize("edit, overrides, words", [c[1:] for c in BAD_SAMPLES], ids=[c[0] for c in BAD_SAMPLES])
def test_an_absurd_input_is_that_samples_input_error_and_shows_in_coverage(tmp_path, edit, overrides, words):
    summary = _run(tmp_path, _dataset(tmp_path, edit), *overrides)
    errors = _input_errors(tmp_path)
    assert list(errors) == ["gridworld-test-00001"] and words in errors["gridworld-test-00001"], errors
    psnr = summary.results[next(k for k in summary.results if k.endswith(".psnr"))]
    assert (psnr.n_valid, psnr.n_total) == (2, 3)
    assert psnr.skip_breakdown == {"input unavailable (benchmark data problem)": 1}


@pytest.mark.parametrize("edit, overrides, words", [c[1:] for c in BAD_SAMPLES], ids=[c[0] for c in BAD_SAMPLES])
def test_strict_stops_on_every_kind_of_unreadable_sample_before_generation(tmp_path, edit, overrides, words):
    from wfeval.config.errors import ConfigError

    with pytest.raises(ConfigError, match="benchmark.strict") as info:
        _run(tmp_path, _dataset(tmp_path, edit), "benchmark.strict=true", *overrides)
    assert "gridworld-test-00001" in str(info.value) and words in str(info.value)
    assert not (tmp_path / "run" / "steps.jsonl").exists()


def test_a_symlink_leaving_the_root_is_read_when_the_user_opts_in(tmp_path):
    summary = _run(tmp_path, _dataset(tmp_path, _symlink_outside), "benchmark.follow_symlinks=true")
    assert _input_errors(tmp_path) == {}
    assert summary.results[next(k for k in summary.results if k.endswith(".psnr"))].n_valid == 3


def test_a_limit_the_user_raises_lets_the_sample_through(tmp_path):
    _run(tmp_path, _dataset(tmp_path, _huge_png), "benchmark.limits.max_frame_pixels=10000")
    errors = _input_errors(tmp_path)
    assert "max_frame_pixels" not in errors.get("gridworld-test-00001", "")
