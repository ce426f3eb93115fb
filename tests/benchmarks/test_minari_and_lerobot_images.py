"""``benchmark=minari`` on a dataset made by Minari 0.5.4's own ``DataCollector`` (CarRacing-v3,
JPEG-encoded frames; ``tests/support/make_minari_fixture.py`` regenerates it) and ``benchmark=lerobot``
on a dataset whose camera is an image feature (PNG bytes inside the parquet rows): frames equal to
what the libraries decode, PSNR equal to scikit-image on those frames, and messages that name what
the file actually holds (issue 35, item 2)."""

from __future__ import annotations

import hashlib
import io
import json
import tarfile
from pathlib import Path

import h5py
import numpy as np
import pytest
from wfeval_test_datasets import CAMERA, episodes, write_hdf5, write_lerobot

from tests.conftest import ROOT
from tests.robustness._run import wfeval
from wfeval.api import EvaluationProtocolSpec, WorldTaskConfig
from wfeval.benchmarks.base import input_error
from wfeval.benchmarks.episodes import HDF5Benchmark, LeRobotBenchmark, MinariBenchmark
from wfeval.config.errors import ConfigError
from wfeval.storage.artifacts import ArtifactError, ArtifactStore, read_array

skm = pytest.importorskip("skimage.metrics")
ARCHIVE = ROOT / "tests" / "support" / "data" / "minari_carracing_tiny.tar.gz"
HORIZON = 12  # Minari's episodes: 12 steps, 13 frames


@pytest.fixture(scope="module")
def minari(tmp_path_factory) -> Path:
    out = tmp_path_factory.mktemp("minari")
    with tarfile.open(ARCHIVE) as tar:
        tar.extractall(out, filter="data")
    return out / "carracing-tiny-v0"


def _requests(bench, tmp_path):
    return bench.requests(store=ArtifactStore(tmp_path / "store"), task=WorldTaskConfig("t"),
                          protocol=EvaluationProtocolSpec("open_loop"))


def _pil_frames(path: Path, episode: str) -> np.ndarray:
    """The frames as Minari's ``HDF5Storage._decode_space`` decodes them: Pillow on each JPEG row."""
    from PIL import Image

    with h5py.File(path, "r") as handle:
        rows = handle[f"{episode}/observations"][()]
    return np.stack([np.array(Image.open(io.BytesIO(np.asarray(r).tobytes())), dtype=np.uint8) for r in rows])


def _sk_psnr_static(frames: np.ndarray) -> list[float]:
    """``model=static`` repeats the initial frame: scikit-image's PSNR of frames 1… against it."""
    return [skm.peak_signal_noise_ratio(frames[t], frames[0], data_range=255) for t in range(1, len(frames))]


def test_minari_frames_are_bit_identical_to_minaris_own_decode(minari, tmp_path):
    decoded = json.loads((minari / "minari_decoded.json").read_text())
    bench = MinariBenchmark(str(minari), fps=50, horizon=HORIZON)
    assert bench.spec.name == "carracing-tiny-v0" and bench.encoded
    assert bench.action_space.describe() == "continuous (3,) float32 in [-1, 1], [0, 1], [0, 1]"  # metadata's Box
    requests = _requests(bench, tmp_path)
    assert [r.sample_id for r in requests] == ["episode_0-t00000", "episode_1-t00000"]
    for request in requests:
        video = np.ascontiguousarray(read_array(request.references["video"]))
        expected = decoded[request.metadata["episode"]]
        assert list(video.shape) == expected["shape"] == [13, 96, 96, 3]
        assert hashlib.sha256(video.tobytes()).hexdigest() == expected["sha256"]
        assert np.array_equal(np.asarray(request.controls["actions"], np.float32),
                              np.asarray(expected["actions"], np.float32))


def _per_frame(ran) -> dict[str, list[float]]:
    rows = [json.loads(line) for line in (ran.run_dir / "metrics.jsonl").read_text().splitlines()]
    return {r["sample_id"]: r["components"]["per_frame"] for r in rows if r["metric_id"] == "psnr"}


def test_a_minari_dataset_runs_with_psnr_equal_to_scikit_image(minari, tmp_path, monkeypatch, capsys):
    ran = wfeval(monkeypatch, capsys, tmp_path, "benchmark=minari", f"benchmark.dataset_root={minari}",
                 "benchmark.fps=50", f"benchmark.horizon={HORIZON}", "model=static", "metric=[psnr]", samples=None)
    assert ran.code == 0, ran.err[-2000:]
    per_frame = _per_frame(ran)
    assert sorted(per_frame) == ["episode_0-t00000", "episode_1-t00000"]
    main = minari / "data" / "main_data.hdf5"
    for sample, values in per_frame.items():
        expected = _sk_psnr_static(_pil_frames(main, sample.split("-")[0]))
        assert values == pytest.approx(expected, abs=1e-9)
    assert ran.value("carracing-tiny-v0.psnr") == pytest.approx(
        np.mean([np.mean(v) for v in per_frame.values()]), abs=1e-9)


def test_a_lerobot_image_feature_dataset_runs_with_psnr_equal_to_scikit_image(tmp_path, monkeypatch, capsys):
    data = episodes()
    root = write_lerobot(tmp_path / "lr_images", data, images=True)
    ran = wfeval(monkeypatch, capsys, tmp_path, "benchmark=lerobot", f"benchmark.dataset_root={root}",
                 "model=static", "metric=[psnr]", samples=None)
    assert ran.code == 0, ran.err[-2000:]
    per_frame = _per_frame(ran)
    assert len(per_frame) == 4
    for sample, values in per_frame.items():
        episode, start = int(sample[8:14]), int(sample.split("-t")[1])
        assert values == pytest.approx(_sk_psnr_static(data[episode][0][start:start + 17]), abs=1e-9)


def test_lerobot_image_frames_are_the_png_rows_and_a_changed_file_is_caught(tmp_path):
    import pyarrow.parquet as pq

    data = episodes()
    root = write_lerobot(tmp_path / "lr", data, images=True)
    requests = _requests(LeRobotBenchmark(str(root)), tmp_path)
    assert requests[3].references["video"].uri == str(root / "data" / "chunk-000" / "file-000.parquet")
    assert np.array_equal(read_array(requests[3].references["video"]), data[1][0][17:34])
    import pyarrow as pa

    path = root / "data" / "chunk-000" / "file-000.parquet"
    rows = pq.read_table(path).to_pylist()
    rows[2][CAMERA] = dict(rows[5][CAMERA])  # episode 0's frame 2 now shows frame 5
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(path)), path)
    assert np.array_equal(read_array(requests[3].references["video"]), data[1][0][17:34])  # untouched: still read
    with pytest.raises(ArtifactError, match=r"file-000.parquet: the file changed since the run read it"):
        read_array(requests[0].references["video"])


def test_lerobot_messages_name_the_video_and_image_features_the_file_holds(tmp_path):
    root = write_lerobot(tmp_path / "lr", episodes(), images=True)
    info = json.loads((root / "meta" / "info.json").read_text())
    info["features"]["observation.images.wrist"] = dict(info["features"][CAMERA])
    (root / "meta" / "info.json").write_text(json.dumps(info))
    with pytest.raises(ConfigError, match=r"has 0 video feature\(s\) \(none\) and 2 image feature\(s\) "
                                          rf"\({CAMERA}, observation.images.wrist\); choose one"):
        LeRobotBenchmark(str(root))


def test_a_lerobot_image_row_without_embedded_bytes_is_that_samples_error(tmp_path):
    import pyarrow as pa
    import pyarrow.parquet as pq

    root = write_lerobot(tmp_path / "lr", episodes(), images=True)
    path = root / "data" / "chunk-000" / "file-000.parquet"
    rows = pq.read_table(path).to_pylist()
    rows[45][CAMERA] = {"bytes": None, "path": "/etc/passwd"}  # episode 1, frame 5: a path is never followed
    pq.write_table(pa.Table.from_pylist(rows, schema=pq.read_schema(path)), path)
    errors = {r.sample_id: input_error(r) for r in _requests(LeRobotBenchmark(str(root)), tmp_path)
              if input_error(r)}
    assert list(errors) == ["episode_000001-t00000"]
    assert "row 45: no embedded image bytes (a path to another file is not followed)" in errors["episode_000001-t00000"]


def test_minari_messages_name_the_layout_and_the_missing_frame_rate(minari):
    main = minari / "data" / "main_data.hdf5"
    with pytest.raises(ConfigError, match=r"has no group 'data'; its top level: episode_0, episode_1 \(episodes at "
                                          r"the file's root, as Minari writes them: benchmark=minari reads this"):
        HDF5Benchmark(str(main), fps=50)
    with pytest.raises(ConfigError, match=r"main_data.hdf5\[episode_0/obs\]: no such dataset; episode_0 holds actions, "
                                          r"infos, observations, .*benchmark=minari reads it"):
        HDF5Benchmark(str(main), fps=50, group="/")
    with pytest.raises(ConfigError, match=r"benchmark.fps: the Minari dataset .* \(env CarRacing-v3\) records no frame "
                                          r"rate .*benchmark.fps="):
        MinariBenchmark(str(minari))
    with pytest.raises(ConfigError, match=r"benchmark.camera: .*one array of observations"):
        MinariBenchmark(str(minari), fps=50, camera="front")
    with pytest.raises(ConfigError, match=r"no main_data.hdf5 at"):
        MinariBenchmark(str(minari / "nothing"), fps=50)


def test_a_corrupt_minari_frame_fails_only_its_sample(minari, tmp_path):
    import shutil

    copy = tmp_path / "copy"
    shutil.copytree(minari, copy)
    with h5py.File(copy / "data" / "main_data.hdf5", "a") as handle:
        rows = handle["episode_1/observations"]
        rows[4] = np.zeros(len(rows[4]), np.uint8)  # no longer a JPEG
    errors = {r.sample_id: input_error(r) for r in _requests(MinariBenchmark(str(copy), fps=50, horizon=HORIZON),
                                                             tmp_path) if input_error(r)}
    assert list(errors) == ["episode_1-t00000"] and "frame 4 is not a readable image" in errors["episode_1-t00000"]


def test_minari_raw_frames_without_jpeg_encoding_read_too(tmp_path):
    """``DataCollector(jpeg_encoding=False)`` stores ``T+1×H×W×3`` frames: read as they are."""
    data = episodes()
    path = tmp_path / "raw" / "data" / "main_data.hdf5"
    path.parent.mkdir(parents=True)
    with h5py.File(path, "w") as handle:
        for k, (frames, actions) in enumerate(data):
            handle[f"episode_{k}/observations"] = frames
            handle[f"episode_{k}/actions"] = actions
    bench = MinariBenchmark(str(tmp_path / "raw"), fps=10)
    requests = _requests(bench, tmp_path)
    assert not bench.encoded and len(requests) == 4
    assert np.array_equal(read_array(requests[1].references["video"]), data[0][0][17:34])


def test_the_robomimic_reader_is_unchanged_by_the_shared_code(tmp_path):
    path = write_hdf5(tmp_path / "demos.hdf5", episodes())
    assert [w.sample_id for w in HDF5Benchmark(str(path), fps=10).records()] == \
        ["demo_0-t00000", "demo_0-t00017", "demo_1-t00000", "demo_1-t00017"]
