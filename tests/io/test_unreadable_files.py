"""Missing, empty, truncated, corrupt and wrong files raise one error type that names the file."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from wfeval.io import VideoReadError, read_image, read_video, write_image, write_video


def clip(t=16) -> np.ndarray:
    return np.random.default_rng(1).integers(0, 256, (t, 32, 32, 3), dtype=np.uint8)


def expect_error(path, fragment: str, reader=read_video):
    with pytest.raises(VideoReadError) as info:
        reader(path)
    assert info.value.path == str(path) and str(path) in str(info.value)
    assert fragment in info.value.reason, info.value.reason
    assert isinstance(info.value, ValueError)


def test_missing_empty_and_garbage_files(tmp_path):
    expect_error(tmp_path / "nope.mkv", "file not found")
    (tmp_path / "empty.mp4").write_bytes(b"")
    expect_error(tmp_path / "empty.mp4", "empty file")
    (tmp_path / "junk.mkv").write_bytes(np.random.default_rng(0).bytes(4000))
    expect_error(tmp_path / "junk.mkv", "not a readable video")
    (tmp_path / "junk.png").write_bytes(b"\x89PNG not really")
    expect_error(tmp_path / "junk.png", "not a readable image", reader=read_image)


@pytest.mark.parametrize("suffix,keep", [(".mkv", 0.6), (".mkv", 0.95), (".mp4", 0.6), (".avi", 0.5), (".npy", 0.5),
                                         (".npz", 0.5)])
def test_truncated_files_are_errors_not_short_videos(tmp_path, suffix, keep):
    path = write_video(tmp_path / f"clip{suffix}", clip(), fps=8)
    data = path.read_bytes()
    path.write_bytes(data[: int(len(data) * keep)])
    with pytest.raises(VideoReadError) as info:
        read_video(path)
    assert str(path) in str(info.value)


def test_unsupported_type_and_bad_arrays(tmp_path):
    (tmp_path / "clip.txt").write_text("hello")
    expect_error(tmp_path / "clip.txt", "unsupported file type '.txt'")
    np.savez(tmp_path / "two.npz", a=np.zeros((2, 2, 2, 3), np.uint8), b=np.zeros(3))
    expect_error(tmp_path / "two.npz", "cannot tell which array is the video")
    np.save(tmp_path / "vector.npy", np.zeros(7, np.uint8))
    expect_error(tmp_path / "vector.npy", "expected a T×H×W or T×H×W×C array")
    np.save(tmp_path / "nothing.npy", np.zeros((0, 4, 4, 3), np.uint8))
    expect_error(tmp_path / "nothing.npy", "empty array")


def test_frame_folders_without_frames_or_with_mixed_sizes(tmp_path):
    (tmp_path / "none").mkdir()
    expect_error(tmp_path / "none", "no frame files")
    mixed = tmp_path / "mixed"
    write_image(mixed / "0.png", np.zeros((8, 8, 3), np.uint8))
    write_image(mixed / "1.png", np.zeros((8, 9, 3), np.uint8))
    expect_error(mixed, "frames differ in size")


@pytest.mark.subprocess  # an import-laziness probe
def test_importing_wfeval_io_does_not_import_av():
    code = "import sys, wfeval.io; print('av' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert out.stdout.strip() == "False"
