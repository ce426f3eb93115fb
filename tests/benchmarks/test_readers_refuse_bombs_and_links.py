"""Issue 46, items 9 and 10: a dataset's frames and files cannot take the reader outside its limits or
its folder.

- an image declaring 60000×60000 pixels (a few hundred bytes of PNG or JPEG) is refused from its
  header before any decoder sizes a buffer from it: ONE input error naming the frame and the limit,
  while the other samples score (never Pillow's ``DecompressionBombError`` ending the run);
- a Minari ``main_data.hdf5`` (or ``metadata.json``, a dataset folder's ``manifest.jsonl``) that is a
  symbolic link out of the dataset folder is a config error (exit 2) naming the link and its target;
- HDF5 links that leave the folder or cycle are refused naming the link and where it points, never
  reported as "0 image datasets; choose a camera".
"""

from __future__ import annotations

import io
import json
import shutil
import struct
import tarfile
import time
import zlib
from pathlib import Path

import h5py
import numpy as np
import pytest
from wfeval_test_datasets import CAMERA, episodes, write_folder, write_hdf5, write_lerobot

from tests.conftest import ROOT
from tests.robustness._run import wfeval
from wfeval.api import EvaluationProtocolSpec, WorldTaskConfig
from wfeval.benchmarks.base import input_error
from wfeval.benchmarks.episodes import HDF5Benchmark, LeRobotBenchmark, MinariBenchmark
from wfeval.benchmarks.episodes.images import decode_images
from wfeval.benchmarks.folder import FolderBenchmark
from wfeval.config.errors import ConfigError
from wfeval.io import Limits, VideoReadError, declared_size, read_image, read_video, write_video
from wfeval.storage.artifacts import ArtifactStore

ARCHIVE = ROOT / "tests" / "support" / "data" / "minari_carracing_tiny.tar.gz"
HORIZON = 12  # the Minari archive's episodes: 12 steps, 13 frames
HUGE = "declares 60000×60000 = 3,600,000,000 pixels, over the limit of 67,108,864; not decoded"


def _small_image(fmt: str) -> bytes:
    from PIL import Image

    out = io.BytesIO()
    Image.fromarray(np.full((8, 8, 3), 120, np.uint8)).save(out, fmt)
    return out.getvalue()


def huge_png(width: int = 60000, height: int = 60000) -> bytes:
    """A valid 8×8 PNG whose IHDR (its CRC fixed) declares ``width×height``."""
    data = bytearray(_small_image("PNG"))
    data[16:24] = struct.pack(">II", width, height)
    data[29:33] = struct.pack(">I", zlib.crc32(bytes(data[12:29])) & 0xFFFFFFFF)
    return bytes(data)


def huge_jpeg(width: int = 60000, height: int = 60000) -> bytes:
    """A valid 8×8 JPEG whose start-of-frame header declares ``width×height``."""
    data, index = bytearray(_small_image("JPEG")), 2
    while data[index + 1] not in (0xC0, 0xC1, 0xC2):
        index += 2 + struct.unpack(">H", data[index + 2:index + 4])[0]
    data[index + 5:index + 9] = struct.pack(">HH", height, width)
    return bytes(data)


def _requests(bench, tmp_path):
    return bench.requests(store=ArtifactStore(tmp_path / "store"), task=WorldTaskConfig("t"),
                          protocol=EvaluationProtocolSpec("open_loop"))


def _errors(bench, tmp_path) -> dict[str, str]:
    return {r.sample_id: input_error(r) for r in _requests(bench, tmp_path) if input_error(r)}


@pytest.fixture
def minari(tmp_path) -> Path:
    with tarfile.open(ARCHIVE) as tar:
        tar.extractall(tmp_path / "m", filter="data")
    return tmp_path / "m" / "carracing-tiny-v0"


# -- item 9: sizes are checked from the header, before any decoder ----------------------------------


def test_the_declared_size_is_read_from_png_jpeg_gif_and_bmp_headers():
    assert declared_size(huge_png()) == (60000, 60000)
    assert declared_size(huge_jpeg(1234, 567)) == (1234, 567)
    assert declared_size(_small_image("PNG")) == declared_size(_small_image("JPEG")) == (8, 8)
    assert declared_size(_small_image("GIF")) == declared_size(_small_image("BMP")) == (8, 8)
    assert declared_size(b"not an image") is None and declared_size(b"\xff\xd8\xff") is None


def test_a_minari_jpeg_declaring_60000x60000_fails_its_one_sample_and_the_rest_score(minari, tmp_path, monkeypatch,
                                                                                    capsys):
    with h5py.File(minari / "data" / "main_data.hdf5", "a") as handle:
        handle["episode_1/observations"][4] = np.frombuffer(huge_jpeg(), np.uint8)
    started = time.perf_counter()
    ran = wfeval(monkeypatch, capsys, tmp_path, "benchmark=minari", f"benchmark.dataset_root={minari}",
                 "benchmark.fps=50", f"benchmark.horizon={HORIZON}", "model=static", "metric=[psnr]", samples=None)
    assert ran.code == 0 and time.perf_counter() - started < 60
    assert "DecompressionBomb" not in ran.err
    assert "1 of 2 sample(s) usable (coverage 0.500)" in ran.err
    assert f"sample 'episode_1-t00000': main_data.hdf5: frames 0..12: 'episode_1/observations': frame 4 {HUGE}" \
        in ran.err
    psnr = ran.results["carracing-tiny-v0.psnr"]
    assert psnr["n_valid"] == 1 and psnr["diagnostics"]["value"] == pytest.approx(9.374, abs=1e-3)


def test_a_lerobot_png_declaring_60000x60000_is_one_input_error_naming_its_row(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = write_lerobot(tmp_path / "lr", episodes(), images=True)
    path = root / "data" / "chunk-000" / "file-000.parquet"
    rows = pq.read_table(path).to_pylist()
    rows[45][CAMERA] = {"bytes": huge_png(), "path": None}  # episode 1, frame 5
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(path)), path)
    requests = _requests(LeRobotBenchmark(str(root)), tmp_path)
    errors = {r.sample_id: input_error(r) for r in requests if input_error(r)}
    assert list(errors) == ["episode_000001-t00000"] and len(requests) == 4
    assert f"'{CAMERA}': frame 5 {HUGE}" in errors["episode_000001-t00000"]


def test_a_frame_pillow_refuses_as_a_bomb_is_an_input_error_not_its_exception(tmp_path):
    """With the limit raised past Pillow's own bomb limit, Pillow's ``DecompressionBombError`` (not an
    OSError) is still the frame's VideoReadError."""
    raised = Limits(max_frame_pixels=4_000_000_000, max_video_pixels=4_000_000_000)
    with pytest.raises(VideoReadError, match=r"'cam': frame 1 is not a readable image \(DecompressionBombError: "):
        decode_images([_small_image("PNG"), huge_png()], tmp_path / "f.parquet", "'cam'", raised)


@pytest.mark.parametrize("name, data", [("big.png", huge_png()), ("big.jpg", huge_jpeg()),
                                        ("tall.png", huge_png(16000, 16000))])
def test_an_image_file_declaring_too_many_pixels_is_refused_before_ffmpeg_probes_it(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data)
    width, height = declared_size(data)
    started = time.perf_counter()
    with pytest.raises(VideoReadError, match=f"declares {width}×{height} = {width * height:,} pixels, over the "
                                             "limit of 67,108,864; not decoded"):
        read_image(path)
    assert time.perf_counter() - started < 1.0  # FFmpeg's probe decoded 16000×16000 in ~13 s before


def test_a_folder_of_frames_with_one_huge_frame_is_refused_naming_it(tmp_path):
    folder = tmp_path / "frames"
    write_video(folder, np.zeros((3, 8, 8, 3), np.uint8))
    (folder / "frame_00001.png").write_bytes(huge_png())
    with pytest.raises(VideoReadError, match=f"frame_00001.png: {HUGE}"):
        read_video(folder)


def test_frames_within_the_limit_still_decode_with_ffmpegs_backstop(tmp_path):
    frames = np.random.default_rng(0).integers(0, 256, (4, 32, 32, 3)).astype(np.uint8)
    path = write_video(tmp_path / "v.mkv", frames, fps=8)
    exact = Limits(max_frame_pixels=32 * 32)
    assert np.array_equal(read_video(path, limits=exact).frames, frames)
    with pytest.raises(VideoReadError, match=r"a frame of 32×32 = 1,024 exceeds the limit of 1,023"):
        read_video(path, limits=Limits(max_frame_pixels=32 * 32 - 1))


# -- item 10: every reader stays inside the dataset folder ------------------------------------------


def _minari(folder: Path, camera_link=None) -> Path:
    """A Minari-layout dataset of two episodes with Dict observations (``front`` frames, ``state``);
    ``camera_link(handle, key, folder)`` writes episode 0's ``front`` its own way."""
    path = folder / "data" / "main_data.hdf5"
    path.parent.mkdir(parents=True)
    with h5py.File(path, "w") as handle:
        for k, (frames, actions) in enumerate(episodes()):
            key = f"episode_{k}/observations/front"
            handle[f"episode_{k}/observations/state"] = np.zeros((len(frames), 2), np.float32)
            if camera_link is not None and k == 0:
                camera_link(handle, key, folder)
            else:
                handle[key] = frames
            handle[f"episode_{k}/actions"] = actions
    return folder


def test_a_minari_main_file_linking_out_of_its_folder_exits_2_naming_the_link_and_target(tmp_path, monkeypatch,
                                                                                          capsys):
    victim = _minari(tmp_path / "victim-v0")
    mine = tmp_path / "mine-v0" / "data"
    mine.mkdir(parents=True)
    (mine / "main_data.hdf5").symlink_to(victim / "data" / "main_data.hdf5")
    ran = wfeval(monkeypatch, capsys, tmp_path, "benchmark=minari", f"benchmark.dataset_root={mine.parent}",
                 "benchmark.fps=10", "model=static", "metric=[psnr]", samples=None)
    assert ran.code == 2
    assert (f"data/main_data.hdf5 of the Minari dataset {mine.parent} is a symbolic link to "
            f"{victim / 'data' / 'main_data.hdf5'}, outside the dataset's folder; it is not read") in ran.err
    assert "victim-v0.psnr" not in ran.out and not (tmp_path / "run" / "results.json").exists()
    opted = MinariBenchmark(str(mine.parent), fps=10, allow_outside_root=True)
    assert opted.spec.name == "mine-v0" and len(opted.records()) == 4  # named after the folder given
    with pytest.raises(ConfigError, match="is a symbolic link to .*victim-v0"):  # named itself: still the layout's
        MinariBenchmark(str(mine / "main_data.hdf5"), fps=10)
    linked = tmp_path / "linked-v0"
    linked.symlink_to(victim)  # dataset_root itself a link to a dataset folder: that folder is the dataset
    assert MinariBenchmark(str(linked), fps=10).spec.name == "victim-v0"


def test_a_minari_metadata_file_linking_out_of_its_folder_is_refused(tmp_path):
    (tmp_path / "secret.json").write_text(json.dumps({"env_spec": {"id": "Secret-v0"}}))
    folder = _minari(tmp_path / "ds-v0")
    (folder / "data" / "metadata.json").symlink_to(tmp_path / "secret.json")
    with pytest.raises(ConfigError, match=rf"data/metadata.json of the Minari dataset .* is a symbolic link to "
                                          rf"{tmp_path / 'secret.json'}, outside the dataset's folder"):
        MinariBenchmark(str(folder), fps=10)


def _outside_link(handle, key, folder):
    outside = folder.parent / "elsewhere"
    outside.mkdir(exist_ok=True)
    with h5py.File(outside / "secret.h5", "w") as other:
        other["frames"] = episodes()[1][0]
    handle[key] = h5py.ExternalLink(str(outside / "secret.h5"), "/frames")


def _cycle(handle, key, folder):
    handle[key] = h5py.SoftLink(f"/{key}_b")
    handle[f"{key}_b"] = h5py.SoftLink(f"/{key}")


def test_a_minari_camera_linking_out_of_the_folder_is_refused_naming_the_link_not_the_camera_count(tmp_path):
    folder = _minari(tmp_path / "ds-v0", _outside_link)
    with pytest.raises(ConfigError) as refused:
        MinariBenchmark(str(folder), fps=10)
    message = str(refused.value)
    assert ("main_data.hdf5[episode_0/observations] cannot be searched for its camera: main_data.hdf5"
            f"[episode_0/observations/front]: its external link {tmp_path / 'elsewhere' / 'secret.h5'} lies outside "
            "the dataset's folder") in message
    assert "0 image" not in message and "choose one" not in message
    assert MinariBenchmark(str(folder), fps=10, allow_outside_root=True).camera == "front"


def test_a_minari_camera_in_a_cycle_of_soft_links_is_refused_naming_each_link(tmp_path):
    folder = _minari(tmp_path / "ds-v0", _cycle)
    with pytest.raises(ConfigError, match=r"the links form a cycle, main_data.hdf5\[/episode_0/observations/front\] "
                                          r"-> main_data.hdf5\[/episode_0/observations/front_b\] -> "
                                          r"main_data.hdf5\[/episode_0/observations/front\]") as refused:
        MinariBenchmark(str(folder), fps=10)
    assert "0 image" not in str(refused.value)
    with pytest.raises(ConfigError, match=r"'front' is not an image observation of .*the links form a cycle"):
        MinariBenchmark(str(folder), fps=10, camera="front")


def test_an_hdf5_camera_left_to_choose_among_a_link_out_names_the_link(tmp_path):
    path = write_hdf5(tmp_path / "ds" / "demos.hdf5", episodes())
    with h5py.File(path, "a") as handle:
        _outside_link(handle, "data/demo_0/obs/wrist_image", tmp_path / "ds")
    with pytest.raises(ConfigError, match=r"benchmark.camera: demos.hdf5\[data/demo_0/obs\] cannot be searched for "
                                          r"its camera: .*its external link .*elsewhere/secret.h5 lies outside"):
        HDF5Benchmark(str(path), fps=10)
    chosen = HDF5Benchmark(str(path), fps=10, camera="agentview_image")  # the link is never read
    assert chosen.camera == "agentview_image" and not _errors(chosen, tmp_path)


def test_a_folder_manifest_linking_out_of_the_root_is_refused(tmp_path):
    root = write_folder(tmp_path / "ds", episodes())
    shutil.move(root / "manifest.jsonl", tmp_path / "other.jsonl")
    (root / "manifest.jsonl").symlink_to(tmp_path / "other.jsonl")
    with pytest.raises(ConfigError, match=rf"manifest.jsonl is a symbolic link to {tmp_path / 'other.jsonl'}, "
                                          "outside the dataset root; it is not read"):
        FolderBenchmark(str(root))
    assert len(FolderBenchmark(str(root), follow_symlinks=True).records()) == 4


def test_a_frame_of_a_frame_folder_linking_out_is_that_samples_input_error(tmp_path):
    data = episodes()
    root = write_folder(tmp_path / "ds", data)
    frames = root / "videos" / "episode_000000-t00000"
    write_video(frames, data[0][0][:17], fps=10)  # a folder of PNG frames
    shutil.move(frames / "frame_00003.png", tmp_path / "outside.png")
    (frames / "frame_00003.png").symlink_to(tmp_path / "outside.png")
    lines = [json.loads(line) for line in (root / "manifest.jsonl").read_text().splitlines()]
    lines[0]["reference_video"] = "videos/episode_000000-t00000"
    (root / "manifest.jsonl").write_text("".join(json.dumps(line) + "\n" for line in lines))
    errors = _errors(FolderBenchmark(str(root)), tmp_path)
    assert list(errors) == ["episode_000000-t00000"]
    assert (f"its frame frame_00003.png resolves to {tmp_path / 'outside.png'}, outside the dataset root"
            in errors["episode_000000-t00000"])


def test_an_external_link_out_of_the_folder_is_refused_without_opening_its_target(tmp_path):
    """The target is not even an HDF5 file: the refusal names the link, so it was never opened."""
    (tmp_path / "elsewhere.h5").write_bytes(b"not an HDF5 file")
    path = write_hdf5(tmp_path / "ds" / "demos.hdf5", episodes())
    with h5py.File(path, "a") as handle:
        del handle["data/demo_1/obs/agentview_image"]
        handle["data/demo_1/obs/agentview_image"] = h5py.ExternalLink(str(tmp_path / "elsewhere.h5"), "/frames")
    errors = _errors(HDF5Benchmark(str(path), fps=10, camera="agentview_image"), tmp_path)
    assert sorted(errors) == ["demo_1-t00000", "demo_1-t00017"]
    assert errors["demo_1-t00000"] == (f"demos.hdf5[data/demo_1/obs/agentview_image]: its external link "
                                       f"{tmp_path / 'elsewhere.h5'} lies outside the dataset's folder "
                                       f"{tmp_path / 'ds'}; set benchmark.allow_outside_root=true to read it")


def test_a_minari_dict_camera_of_jpeg_rows_is_chosen_and_read_encoded(tmp_path):
    from PIL import Image

    def jpeg_rows(handle, key, folder):
        rows = handle.create_dataset(key, (len(frames),), dtype=h5py.vlen_dtype(np.uint8))
        for t, frame in enumerate(frames):
            out = io.BytesIO()
            Image.fromarray(frame).save(out, "JPEG")
            rows[t] = np.frombuffer(out.getvalue(), np.uint8)

    frames = episodes()[0][0]
    bench = MinariBenchmark(str(_minari(tmp_path / "ds-v0", jpeg_rows)), fps=10, episodes=["episode_0"])
    assert bench.camera == "front" and bench.encoded
    assert not _errors(bench, tmp_path) and len(bench.records()) == 2


def test_a_lerobot_info_json_linking_out_is_refused_before_it_is_read(tmp_path):
    root = write_lerobot(tmp_path / "lr", episodes())
    (tmp_path / "other.json").write_text("{ not json")  # read, it would fail as unreadable JSON instead
    (root / "meta" / "info.json").unlink()
    (root / "meta" / "info.json").symlink_to(tmp_path / "other.json")
    with pytest.raises(ConfigError, match=rf"meta/info.json resolves to {tmp_path / 'other.json'}, outside the "
                                          "dataset's folder"):
        LeRobotBenchmark(str(root))
