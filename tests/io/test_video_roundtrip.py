"""Every lossless format round-trips a 64×64×16 clip exactly, with its fps; mp4 is close; odd sizes keep their size."""

from __future__ import annotations

import numpy as np
import pytest

from wfeval.io import Video, read_image, read_video, write_image, write_video

LOSSLESS = [".mkv", ".avi", ".mov", ".npy", ".npz", ""]  # "" = a folder of PNG frames


def clip(t=16, h=64, w=64, seed=0) -> np.ndarray:
    return np.random.default_rng(seed).integers(0, 256, (t, h, w, 3), dtype=np.uint8)


def smooth_clip(t=16, h=64, w=64) -> np.ndarray:
    y, x = np.mgrid[0:h, 0:w]
    frames = [np.stack([(x * 4 + i * 3) % 256, (y * 4) % 256, np.full_like(x, 128 + i)], -1) for i in range(t)]
    return np.stack(frames).astype(np.uint8)


@pytest.mark.parametrize("suffix", LOSSLESS)
def test_lossless_formats_round_trip_exactly(tmp_path, suffix):
    video = clip()
    path = write_video(tmp_path / f"clip{suffix}", video, fps=8)
    back = read_video(path)
    assert isinstance(back, Video) and back.frames.dtype == np.uint8
    np.testing.assert_array_equal(back.frames, video)
    if suffix not in (".npy", ""):  # containers and .npz record the frame rate
        assert back.fps == 8.0


@pytest.mark.parametrize("suffix", [".mkv", ".mov", ".npz", ""])
def test_odd_sizes_round_trip_exactly(tmp_path, suffix):
    video = clip(t=5, h=63, w=61)
    np.testing.assert_array_equal(read_video(write_video(tmp_path / f"odd{suffix}", video, fps=12)).frames, video)


def test_mp4_is_h264_lossy_but_close_and_keeps_odd_sizes(tmp_path):
    video = smooth_clip()
    back = read_video(write_video(tmp_path / "clip.mp4", video, fps=8))
    assert back.frames.shape == video.shape and back.fps == 8.0
    assert back.metadata["codec"] == "h264" and back.metadata["pix_fmt"] == "yuv420p"
    assert np.abs(back.frames.astype(int) - video).mean() < 3.0
    odd = read_video(write_video(tmp_path / "odd.mp4", smooth_clip(t=4, h=63, w=61), fps=8))
    assert odd.frames.shape == (4, 63, 61, 3) and odd.metadata["pix_fmt"] == "yuv444p"


def test_fractional_fps_is_kept(tmp_path):
    assert read_video(write_video(tmp_path / "ntsc.mkv", clip(t=3), fps=29.97)).fps == pytest.approx(29.97, abs=1e-3)


def test_grayscale_becomes_three_channels_and_alpha_is_dropped(tmp_path):
    gray = clip(t=4)[..., 0]
    for name, array in (("gray.npy", gray), ("gray1.npy", gray[..., None])):
        np.save(tmp_path / name, array)
        frames = read_video(tmp_path / name).frames
        assert frames.shape == (4, 64, 64, 3) and (frames == gray[..., None]).all()
    rgba = np.concatenate([clip(t=4), np.full((4, 64, 64, 1), 7, np.uint8)], axis=-1)
    np.save(tmp_path / "rgba.npy", rgba)
    np.testing.assert_array_equal(read_video(tmp_path / "rgba.npy").frames, rgba[..., :3])
    np.testing.assert_array_equal(read_video(write_video(tmp_path / "rgba.mkv", rgba, fps=8)).frames, rgba[..., :3])


def test_bool_and_small_integer_arrays_are_converted_floats_are_refused(tmp_path):
    np.save(tmp_path / "mask.npy", np.ones((2, 4, 4), bool))
    assert (read_video(tmp_path / "mask.npy").frames == 255).all()
    np.save(tmp_path / "int16.npy", np.full((2, 4, 4, 3), 200, np.int16))
    assert read_video(tmp_path / "int16.npy").frames.dtype == np.uint8
    np.save(tmp_path / "float.npy", np.zeros((2, 4, 4, 3), np.float32))
    with pytest.raises(ValueError, match=r"float\.npy: dtype float32 is not supported .*\(a \* 255\)"):
        read_video(tmp_path / "float.npy")
    np.save(tmp_path / "chw.npy", np.zeros((2, 3, 16, 16), np.uint8))
    with pytest.raises(ValueError, match="channel-first"):
        read_video(tmp_path / "chw.npy")


def test_images_png_jpeg_npy_and_the_first_frame_of_a_video(tmp_path):
    image = clip(t=1)[0]
    np.testing.assert_array_equal(read_image(write_image(tmp_path / "a.png", image)), image)
    np.testing.assert_array_equal(read_image(write_image(tmp_path / "a.npy", image)), image)
    jpeg = read_image(write_image(tmp_path / "a.jpg", smooth_clip(t=1)[0]))
    assert jpeg.shape == image.shape and np.abs(jpeg.astype(int) - smooth_clip(t=1)[0]).mean() < 4
    write_image(tmp_path / "gray.png", image[..., 0])
    assert (read_image(tmp_path / "gray.png") == image[..., :1]).all()
    video = clip(t=3)
    np.testing.assert_array_equal(read_image(write_video(tmp_path / "v.mkv", video, fps=8)), video[0])


def test_frame_folders_are_read_in_natural_order(tmp_path):
    video = clip(t=12, h=8, w=8)
    folder = tmp_path / "frames"
    folder.mkdir()
    for i, frame in enumerate(video):
        write_image(folder / f"f{i}.png", frame)  # f10 sorts after f9, not after f1
    (folder / "notes.txt").write_text("ignored")
    np.testing.assert_array_equal(read_video(folder).frames, video)
