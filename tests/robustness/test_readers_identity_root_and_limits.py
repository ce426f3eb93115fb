"""Round 4 (issue 32, items 1, 6, 12, 13) on the dataset readers, each class with its hostile input:

- identity covers every byte read: HDF5 rows kept outside the ``.hdf5`` file (external raw storage,
  an ``ExternalLink``, a virtual dataset) are part of the sample's identity; after the outside file
  changes, the same store gives the number a fresh store gives (never the stale one);
- readers stay inside their root: external links, ``..`` and symlinks in LeRobot's path templates
  are refused naming the file and the option that allows them; templates cannot reach attributes;
- limits before reading: an HDF5 file declaring 10⁸ frames (or 10⁹ actions, a huge mask) is refused
  in well under a second, naming the limit to raise;
- coverage counts windows: a truncated video or an episode with unreadable frames counts every window
  it would have given.
"""

from __future__ import annotations

import json
import math
import shutil
import time
from pathlib import Path

import h5py
import numpy as np
import pytest
from wfeval_test_datasets import CAMERA, encode, episodes, write_lerobot, write_video_actions

from tests.robustness._run import wfeval
from wfeval.api import EvaluationProtocolSpec, WorldTaskConfig
from wfeval.benchmarks.base import input_error
from wfeval.benchmarks.episodes import HDF5Benchmark, LeRobotBenchmark
from wfeval.config.errors import ConfigError
from wfeval.storage.artifacts import ArtifactStore

T, HW, HORIZON = 20, 16, 8
KEY = "data/demo_{}/obs/agentview_image"


def _frames(seed: int) -> np.ndarray:
    rng = np.random.default_rng(seed)
    base = rng.integers(0, 256, (1, HW, HW, 3)).astype(np.int64)
    drift = np.cumsum(rng.integers(-6, 7, (T, HW, HW, 3)), axis=0)
    return np.clip(base + drift, 0, 255).astype(np.uint8)


def _requests(bench, tmp_path):
    return bench.requests(store=ArtifactStore(tmp_path / "store"), task=WorldTaskConfig("t"),
                          protocol=EvaluationProtocolSpec("open_loop"))


def _errors(bench, tmp_path) -> dict[str, str]:
    return {r.sample_id: input_error(r) for r in _requests(bench, tmp_path) if input_error(r)}


def _hdf5(folder: Path, demo0=None, demo1=None) -> Path:
    """``folder/demos.hdf5`` of two demos; ``demoK(handle, key)`` writes demo K's frames its own way."""
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / "demos.hdf5"
    with h5py.File(path, "w") as handle:
        for k, write in enumerate((demo0, demo1)):
            key = KEY.format(k)
            if write is None:
                handle.create_dataset(key, data=_frames(k))
            else:
                handle.require_group(key.rsplit("/", 1)[0])
                write(handle, key)
            handle[f"data/demo_{k}/actions"] = np.zeros((T - 1, 2), np.float32)
    return path


def _static_psnr(monkeypatch, capsys, tmp_path, path: Path, store: str, name: str, *extra: str) -> float:
    ran = wfeval(monkeypatch, capsys, tmp_path, "benchmark=hdf5", f"benchmark.dataset_root={path}",
                 "benchmark.fps=10", f"benchmark.horizon={HORIZON}", "model=static", "metric=[psnr]", *extra,
                 f"run.store_dir={tmp_path / store}", name=name, samples=None)
    assert ran.code == 0, ran.err[-2000:]
    return ran.value("hdf5.psnr")


# -- 32.1: identity covers every byte read --------------------------------------------------------


def _external_raw(handle, key):
    handle.create_dataset(key, shape=(T, HW, HW, 3), dtype="u1", external=[("frames.raw", 0, T * HW * HW * 3)])


def _write_raw(folder: Path, frames: np.ndarray) -> None:
    (folder / "frames.raw").write_bytes(np.ascontiguousarray(frames).tobytes())


def test_changed_external_raw_storage_gives_the_fresh_number_from_the_same_store(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "ds"
    monkeypatch.chdir(tmp_path)  # HDF5 alone would look for frames.raw here (the working folder): never found
    path = _hdf5(folder, demo0=_external_raw)
    _write_raw(folder, _frames(0))
    first = _static_psnr(monkeypatch, capsys, tmp_path, path, "store", "run1")
    changed = _frames(0)
    changed[1:] = 255 - changed[1:]  # the model's initial frame stays; every later reference frame changes
    _write_raw(folder, changed)
    again = _static_psnr(monkeypatch, capsys, tmp_path, path, "store", "run2")
    fresh = _static_psnr(monkeypatch, capsys, tmp_path, path, "fresh_store", "run3")
    assert again == fresh and abs(again - first) > 1.0, (first, again, fresh)


def test_changed_external_link_target_gives_the_fresh_number_from_the_same_store(tmp_path, monkeypatch, capsys):
    folder = tmp_path / "ds"
    folder.mkdir()

    def linked(handle, key):
        handle[key] = h5py.ExternalLink("frames.h5", "/frames")

    with h5py.File(folder / "frames.h5", "w") as other:
        other["frames"] = _frames(0)
    path = _hdf5(folder, demo0=linked)
    first = _static_psnr(monkeypatch, capsys, tmp_path, path, "store", "run1")
    with h5py.File(folder / "frames.h5", "a") as other:
        other["frames"][1:] = 255 - other["frames"][1:]
    assert _static_psnr(monkeypatch, capsys, tmp_path, path, "store", "run2") == \
        _static_psnr(monkeypatch, capsys, tmp_path, path, "fresh_store", "run3") != first


def test_a_sample_read_after_its_external_file_changed_is_refused_naming_it(tmp_path):
    from wfeval.storage.artifacts import ArtifactError, read_array

    folder = tmp_path / "ds"
    path = _hdf5(folder, demo0=_external_raw)
    _write_raw(folder, _frames(0))
    requests = _requests(HDF5Benchmark(str(path), fps=10, horizon=HORIZON), tmp_path)
    _write_raw(folder, _frames(5))
    with pytest.raises(ArtifactError, match=r"external raw storage .*frames.raw, which changed"):
        read_array(requests[0].references["video"])


def test_a_virtual_dataset_with_a_missing_source_is_refused_not_read_as_fill_values(tmp_path):
    folder = tmp_path / "ds"

    def virtual(handle, key):
        layout = h5py.VirtualLayout(shape=(T, HW, HW, 3), dtype="u1")
        layout[:] = h5py.VirtualSource("gone.h5", "frames", shape=(T, HW, HW, 3))
        handle.create_virtual_dataset(key, layout, fillvalue=0)

    path = _hdf5(folder, demo0=virtual)
    errors = _errors(HDF5Benchmark(str(path), fps=10, horizon=HORIZON), tmp_path)
    assert sorted(errors) == ["demo_0-t00000", "demo_0-t00009"]
    assert all("virtual source" in e and "gone.h5 is not a readable regular file" in e for e in errors.values())


# -- 32.12: readers stay inside their root ----------------------------------------------------------


def test_an_external_link_leaving_the_folder_is_refused_unless_the_user_opts_in(tmp_path, monkeypatch, capsys):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    with h5py.File(outside / "secret.h5", "w") as other:
        other["frames"] = _frames(1)

    def linked(handle, key):
        handle[key] = h5py.ExternalLink(str(outside / "secret.h5"), "/frames")

    path = _hdf5(tmp_path / "ds", demo1=linked)
    ran = wfeval(monkeypatch, capsys, tmp_path, "benchmark=hdf5", f"benchmark.dataset_root={path}",
                 "benchmark.fps=10", f"benchmark.horizon={HORIZON}", "model=static", "metric=[psnr]", samples=None)
    assert ran.code == 0
    assert "2 of 4 sample(s) usable (coverage 0.500)" in ran.err
    assert f"its external link {outside / 'secret.h5'} lies outside the dataset's folder" in ran.err
    assert "benchmark.allow_outside_root=true" in ran.err
    assert ran.results["hdf5.psnr"]["n_valid"] == 2
    opted = wfeval(monkeypatch, capsys, tmp_path, "benchmark=hdf5", f"benchmark.dataset_root={path}",
                   "benchmark.fps=10", f"benchmark.horizon={HORIZON}", "model=static", "metric=[psnr]",
                   "benchmark.allow_outside_root=true", name="opted", samples=None)
    assert opted.code == 0 and "coverage" not in opted.err and opted.results["hdf5.psnr"]["n_valid"] == 4


def test_external_raw_storage_outside_the_folder_is_refused(tmp_path):
    outside = tmp_path / "elsewhere"
    outside.mkdir()
    (outside / "raw.bin").write_bytes(_frames(0).tobytes())

    def raw(handle, key):
        handle.create_dataset(key, shape=(T, HW, HW, 3), dtype="u1",
                              external=[(str(outside / "raw.bin"), 0, T * HW * HW * 3)])

    errors = _errors(HDF5Benchmark(str(_hdf5(tmp_path / "ds", demo0=raw)), fps=10, horizon=HORIZON), tmp_path)
    assert set(errors) == {"demo_0-t00000", "demo_0-t00009"}
    assert "external raw storage" in errors["demo_0-t00000"] and "outside the dataset's folder" in \
        errors["demo_0-t00000"]


def test_a_cycle_of_soft_links_is_an_error_not_a_hang(tmp_path):
    def cycle(handle, key):
        group = handle[key.rsplit("/", 1)[0]]
        group["agentview_image"] = h5py.SoftLink(f"/{key}_b")
        handle[f"{key}_b"] = h5py.SoftLink(f"/{key}")

    errors = _errors(HDF5Benchmark(str(_hdf5(tmp_path / "ds", demo0=cycle)), fps=10, horizon=HORIZON,
                                   camera="agentview_image"), tmp_path)
    assert "more than 16 links on the way" in errors["demo_0-t00000"]


@pytest.fixture
def lerobot(tmp_path):
    return write_lerobot(tmp_path / "lr", episodes())


def _set_info(root: Path, **changes) -> None:
    info = json.loads((root / "meta" / "info.json").read_text())
    (root / "meta" / "info.json").write_text(json.dumps({**info, **changes}))


def test_a_lerobot_video_path_with_dotdot_is_refused_and_the_outside_file_never_read(lerobot, tmp_path, monkeypatch,
                                                                                     capsys):
    outside = tmp_path / "outside"
    outside.mkdir()
    shutil.copy(lerobot / "videos" / CAMERA / "chunk-000" / "file-000.mp4", outside / f"{CAMERA}.mp4")
    _set_info(lerobot, video_path="../outside/{video_key}.mp4")
    ran = wfeval(monkeypatch, capsys, tmp_path, "benchmark=lerobot", f"benchmark.dataset_root={lerobot}",
                 "model=oracle", "metric=[psnr]", samples=None)
    assert ran.code != 0 or ran.results["lerobot.psnr"]["n_valid"] == 0
    assert "meta/info.json video_path gives '../outside/observation.images.front.mp4' contains '..'" in ran.err
    assert "100.000" not in ran.out  # the oracle's score on the outside file never appears
    opted = wfeval(monkeypatch, capsys, tmp_path, "benchmark=lerobot", f"benchmark.dataset_root={lerobot}",
                   "model=oracle", "metric=[psnr]", "benchmark.allow_outside_root=true", name="opted", samples=None)
    assert opted.code == 0 and opted.value("lerobot.psnr") == 100.0


@pytest.mark.parametrize("template, words", [
    ("videos/{video_key.__class__.__name__}/x.mp4", r"the field \{video_key.__class__.__name__\} \(known fields"),
    ("videos/{video_key[0]}/x.mp4", "no attributes, indexes or conversions"),
    ("videos/{video_key!r}/x.mp4", r"\{video_key!r\}"),
    ("videos/{secret}/x.mp4", r"\{secret\}"),
    ("videos/{chunk_index:999999999d}/x.mp4", r"\{chunk_index:999999999d\}"),  # a gigabyte of padding
])
def test_lerobot_templates_cannot_reach_attributes_indexes_or_unknown_fields(lerobot, template, words):
    _set_info(lerobot, video_path=template)
    with pytest.raises(ConfigError, match=rf"meta/info.json: video_path .*{words}"):
        LeRobotBenchmark(str(lerobot))


def test_a_lerobot_data_file_symlinked_outside_is_refused(lerobot, tmp_path):
    data = lerobot / "data" / "chunk-000" / "file-000.parquet"
    outside = tmp_path / "elsewhere.parquet"
    shutil.move(data, outside)
    data.symlink_to(outside)
    errors = _errors(LeRobotBenchmark(str(lerobot)), tmp_path)
    assert len(errors) == 4 and all("outside the dataset's folder" in e for e in errors.values())
    assert not _errors(LeRobotBenchmark(str(lerobot), allow_outside_root=True), tmp_path / "opted")


# -- 32.6: limits before reading ---------------------------------------------------------------------


def test_an_hdf5_file_declaring_1e8_frames_is_refused_in_no_time_naming_the_limit(tmp_path, monkeypatch, capsys):
    def huge(handle, key):
        handle.create_dataset(key, shape=(10 ** 8, 8, 8, 3), dtype="u1", chunks=(1, 8, 8, 3))

    path = _hdf5(tmp_path / "ds", demo0=huge)
    assert path.stat().st_size < 100_000
    began = time.perf_counter()
    ran = wfeval(monkeypatch, capsys, tmp_path, "benchmark=hdf5", f"benchmark.dataset_root={path}",
                 "benchmark.fps=10", f"benchmark.horizon={HORIZON}", "model=static", "metric=[psnr]", samples=None)
    assert time.perf_counter() - began < 60
    assert ran.code == 0 and "coverage 0.667" in ran.err  # demo_0: one unreadable sample; demo_1: two windows
    assert "demos.hdf5[data/demo_0/obs/agentview_image]: array of shape (100000000, 8, 8, 3):" in ran.err
    assert "benchmark.limits.max_frames=100000000" in ran.err or "benchmark.limits.max_array_bytes" in ran.err


def test_huge_actions_and_masks_are_refused_before_any_allocation(tmp_path):
    path = _hdf5(tmp_path / "ds")
    with h5py.File(path, "a") as handle:
        del handle["data/demo_1/actions"]
        handle.create_dataset("data/demo_1/actions", shape=(10 ** 9, 2), dtype="f8", chunks=(1000, 2))
    errors = _errors(HDF5Benchmark(str(path), fps=10, horizon=HORIZON), tmp_path)
    assert "data/demo_1/actions" in errors["demo_1-t00000"] and "max_array_bytes" in errors["demo_1-t00000"]
    with h5py.File(path, "a") as handle:
        handle.create_dataset("mask/train", shape=(10 ** 9,), dtype="S16", chunks=(1000,))
    with pytest.raises(ConfigError, match=r"demos.hdf5\[mask/train\]: .*benchmark.limits.max_array_bytes"):
        HDF5Benchmark(str(path), fps=10, horizon=HORIZON)


def test_a_limit_the_user_lowers_applies_to_hdf5_frames(tmp_path):
    errors = _errors(HDF5Benchmark(str(_hdf5(tmp_path / "ds")), fps=10, horizon=HORIZON,
                                   limits={"max_frames": 10}), tmp_path)
    # both episodes are longer than the limit: one unreadable sample each (a length past it is not believed)
    assert sorted(errors) == ["demo_0-t00000", "demo_1-t00000"] and all("max_frames" in e for e in errors.values())


def test_a_lerobot_episode_declaring_too_many_frames_is_one_unreadable_sample(lerobot, tmp_path):
    import pyarrow.parquet as pq

    path = lerobot / "meta" / "episodes" / "chunk-000" / "file-000.parquet"
    rows = pq.read_table(path).to_pylist()
    rows[0]["length"] = 10 ** 8
    import pyarrow as pa

    pq.write_table(pa.Table.from_pylist(rows), path)
    errors = _errors(LeRobotBenchmark(str(lerobot)), tmp_path)
    assert list(errors) == ["episode_000000-t00000"] and "max_frames=100000000" in errors["episode_000000-t00000"]


# -- 32.13: coverage counts windows ------------------------------------------------------------------


def test_a_video_shorter_than_its_actions_counts_every_window_it_lost(tmp_path, monkeypatch, capsys):
    data = episodes()
    root = write_video_actions(tmp_path / "pairs", data)
    encode(root / "episode_000001.mp4", data[1][0][:20])  # truncated: 20 of 40 frames, actions for 40
    ran = wfeval(monkeypatch, capsys, tmp_path, "benchmark=video_actions", f"benchmark.dataset_root={root}",
                 "model=oracle", "metric=[psnr]", samples=None)
    assert ran.code == 0
    assert "2 of 4 sample(s) usable (coverage 0.500)" in ran.err and "coverage 1.000" not in ran.err
    assert "episode_000001.mp4: 20 frames, shorter than its 39 actions in episode_000001.npy" in ran.err
    assert ran.results["video_actions.psnr"]["n_total"] == 4 and ran.results["video_actions.psnr"]["n_valid"] == 2


def test_an_hdf5_episode_with_unreadable_frames_counts_its_windows(tmp_path):
    def floats(handle, key):
        handle.create_dataset(key, data=np.zeros((T, HW, HW, 3), np.float32))

    bench = HDF5Benchmark(str(_hdf5(tmp_path / "ds", demo0=floats)), fps=10, horizon=HORIZON)
    errors = _errors(bench, tmp_path)
    assert sorted(errors) == ["demo_0-t00000", "demo_0-t00009"]  # as many as its 20 frames give
    usable = len(bench.records()) - len(errors)
    assert math.isclose(usable / len(bench.records()), 0.5)


def test_lerobot_parquet_files_are_held_to_the_byte_limit_before_reading(lerobot, tmp_path):
    with pytest.raises(ConfigError, match=r"meta/episodes/chunk-000/file-000.parquet: its columns are [\d,]+ bytes "
                                          r"uncompressed, over the limit of 100 .*benchmark.limits.max_array_bytes="):
        LeRobotBenchmark(str(lerobot), limits={"max_array_bytes": 100})
