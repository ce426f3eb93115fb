"""Malformed datasets for the readers: a dataset-wide problem is a config error naming the file and the
key; an episode's problem makes its samples unreadable with the reason (file, key, action index),
never a crash and never another file's content; files are read in place and checked on every read."""

from __future__ import annotations

import json
import shutil

import h5py
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from wfeval_test_datasets import CAMERA, episodes, write_folder, write_hdf5, write_lerobot, write_video_actions

from tests.conftest import cli_env, run_cli
from wfeval.api import EvaluationProtocolSpec, WorldTaskConfig
from wfeval.benchmarks.base import input_error
from wfeval.benchmarks.episodes import HDF5Benchmark, LeRobotBenchmark, VideoActionsBenchmark
from wfeval.benchmarks.folder import FolderBenchmark
from wfeval.config.errors import ConfigError
from wfeval.storage.artifacts import ArtifactError, ArtifactStore, read_array

TASK, PROTOCOL = WorldTaskConfig("t"), EvaluationProtocolSpec("open_loop")


def _requests(bench, tmp_path):
    return bench.requests(store=ArtifactStore(tmp_path / "store"), task=TASK, protocol=PROTOCOL)


def _errors(requests) -> dict[str, str]:
    return {r.sample_id: input_error(r) for r in requests if input_error(r)}


@pytest.fixture(scope="module")
def data():
    return episodes()


# -- LeRobot ---------------------------------------------------------------------------------------


@pytest.fixture
def lerobot(tmp_path, data):
    return write_lerobot(tmp_path / "lr", data)


def test_lerobot_without_info_json_is_a_config_error(lerobot):
    (lerobot / "meta" / "info.json").unlink()
    with pytest.raises(ConfigError, match=r"has no meta/info.json; not a LeRobot dataset"):
        LeRobotBenchmark(str(lerobot))


def test_lerobot_older_codebase_version_is_refused_with_the_way_out(lerobot):
    info = json.loads((lerobot / "meta" / "info.json").read_text())
    (lerobot / "meta" / "info.json").write_text(json.dumps({**info, "codebase_version": "v2.1"}))
    with pytest.raises(ConfigError, match=r"codebase_version 'v2.1'.*v3"):
        LeRobotBenchmark(str(lerobot))


def test_lerobot_unknown_camera_and_action_key_name_what_exists(lerobot):
    with pytest.raises(ConfigError, match=rf"benchmark.camera: 'wrist' is neither a video nor an image feature .* 1 video feature\(s\) \({CAMERA}\)"):
        LeRobotBenchmark(str(lerobot), camera="wrist")
    with pytest.raises(ConfigError, match=r"benchmark.action_key: 'actions' is not a feature .*action"):
        LeRobotBenchmark(str(lerobot), action_key="actions")


def test_lerobot_episode_metadata_missing_a_column_names_file_and_column(lerobot):
    path = lerobot / "meta" / "episodes" / "chunk-000" / "file-000.parquet"
    table = pq.read_table(path)
    pq.write_table(table.drop_columns([f"videos/{CAMERA}/from_timestamp"]), path)
    with pytest.raises(ConfigError, match=rf"file-000.parquet: missing column\(s\) videos/{CAMERA}/from_timestamp"):
        LeRobotBenchmark(str(lerobot))


def test_lerobot_missing_video_makes_every_sample_unreadable_naming_the_file(lerobot, tmp_path):
    video = lerobot / "videos" / CAMERA / "chunk-000" / "file-000.mp4"
    video.unlink()
    bench = LeRobotBenchmark(str(lerobot))
    errors = _errors(_requests(bench, tmp_path))
    assert len(errors) == 4 and all(f"videos/{CAMERA}/chunk-000/file-000.mp4: file not found" in e
                                    for e in errors.values())


def test_lerobot_corrupt_video_is_the_samples_input_error_naming_file_and_frames(lerobot, tmp_path):
    video = lerobot / "videos" / CAMERA / "chunk-000" / "file-000.mp4"
    video.write_bytes(video.read_bytes()[: len(video.read_bytes()) // 3])
    errors = _errors(_requests(LeRobotBenchmark(str(lerobot)), tmp_path))
    assert errors, "a truncated video must make samples unreadable"
    assert all("file-000.mp4: frames" in e for e in errors.values()), errors


def test_lerobot_data_file_with_a_wrong_row_count_names_the_episode(lerobot, tmp_path):
    path = lerobot / "data" / "chunk-000" / "file-000.parquet"
    table = pq.read_table(path)
    pq.write_table(table.slice(0, table.num_rows - 3), path)  # episode 1 loses its last rows
    errors = _errors(_requests(LeRobotBenchmark(str(lerobot)), tmp_path))
    assert list(errors) == ["episode_000001-t00000", "episode_000001-t00017"]  # every window of it: coverage 0.5
    assert "data/chunk-000/file-000.parquet: 37 row(s) of episode_index 1; meta/episodes says length 40" in \
        errors["episode_000001-t00000"]


def test_lerobot_nan_action_fails_only_the_samples_it_falls_in(lerobot, tmp_path):
    path = lerobot / "data" / "chunk-000" / "file-000.parquet"
    table = pq.read_table(path)
    actions = np.asarray(table.column("action").to_pylist(), np.float32)
    actions[20, 1] = np.nan  # episode 0, frame 20: inside its second window (frames 17..32)
    column = pa.array(actions.tolist(), type=pa.list_(pa.float32(), 2))
    pq.write_table(table.set_column(table.column_names.index("action"), "action", column), path)
    errors = _errors(_requests(LeRobotBenchmark(str(lerobot)), tmp_path))
    assert list(errors) == ["episode_000000-t00017"]
    assert "file-000.parquet['action'] (episode_index 0): action 20 element 1 (vy) is nan" in \
        errors["episode_000000-t00017"]


# -- HDF5 ------------------------------------------------------------------------------------------


@pytest.fixture
def hdf5(tmp_path, data):
    return write_hdf5(tmp_path / "demos.hdf5", data)


def test_hdf5_missing_group_or_camera_is_a_config_error_naming_what_exists(hdf5):
    with pytest.raises(ConfigError, match=r"benchmark.group: .* has no group 'demos'; its top level: data, mask"):
        HDF5Benchmark(str(hdf5), group="demos", fps=10)
    with pytest.raises(ConfigError, match=r"benchmark.camera: no 'wrist_image' in .*its image datasets: agentview_image"):
        HDF5Benchmark(str(hdf5), camera="wrist_image", fps=10)
    with pytest.raises(ConfigError, match=r"benchmark.fps: .* records no frame rate"):
        HDF5Benchmark(str(hdf5))


def test_hdf5_garbage_file_is_a_config_error(tmp_path):
    path = tmp_path / "bad.hdf5"
    path.write_bytes(b"not an hdf5 file" * 100)
    with pytest.raises(ConfigError, match=r"is not a readable HDF5 file"):
        HDF5Benchmark(str(path), fps=10)


def test_hdf5_episode_without_actions_or_with_bad_frames_names_file_and_key(hdf5, tmp_path):
    with h5py.File(hdf5, "a") as handle:
        del handle["data/demo_1/actions"]
        handle.create_dataset("data/demo_2/obs/agentview_image", data=np.zeros((20, 8, 8), np.float32))
        handle.create_dataset("data/demo_2/actions", data=np.zeros((20, 2), np.float32))
    errors = _errors(_requests(HDF5Benchmark(str(hdf5), fps=10), tmp_path))
    assert errors == {  # every window the episode's length gives is an unreadable sample: coverage counts them
        "demo_1-t00000": "demos.hdf5[data/demo_1/actions]: no such dataset",
        "demo_1-t00017": "demos.hdf5[data/demo_1/actions]: no such dataset",
        "demo_2-t00000": "demos.hdf5[data/demo_2/obs/agentview_image]: frames must be uint8 T×H×W×3 RGB, found "
                         "float32 (20, 8, 8)",
    }


def test_hdf5_split_reads_robomimic_masks(hdf5):
    assert [w.sample_id for w in HDF5Benchmark(str(hdf5), fps=10, split="valid").records()] == \
        ["demo_1-t00000", "demo_1-t00017"]
    with pytest.raises(ConfigError, match=r"benchmark.split: 'test' selects no episode .* its splits: train, valid"):
        HDF5Benchmark(str(hdf5), fps=10, split="test")


def test_hdf5_is_read_in_place_and_a_changed_file_is_caught_on_read(hdf5, tmp_path):
    requests = _requests(HDF5Benchmark(str(hdf5), fps=10), tmp_path)
    assert not list((tmp_path / "store").rglob("objects/*/*"))  # nothing copied into the store
    assert requests[0].references["video"].uri == str(hdf5)
    with h5py.File(hdf5, "a") as handle:
        handle["data/demo_0/obs/agentview_image"][3] = 0
    with pytest.raises(ArtifactError, match=r"demos.hdf5: the file changed since the run read it"):
        read_array(requests[0].references["video"])


# -- video + npy pairs ------------------------------------------------------------------------------


@pytest.fixture
def pairs(tmp_path, data):
    return write_video_actions(tmp_path / "pairs", data)


def test_video_without_actions_and_actions_without_video_are_reported(pairs, tmp_path):
    (pairs / "episode_000001.npy").rename(pairs / "orphan.npy")
    bench = VideoActionsBenchmark(str(pairs))
    errors = _errors(_requests(bench, tmp_path))
    missing = "episode_000001.npy: file not found (the actions of episode_000001.mp4)"
    assert errors == {"episode_000001-t00000": missing, "episode_000001-t00017": missing}
    assert any(p.where == "orphan.npy" and "actions without a video" in p.message for p in bench.problems)


def test_actions_of_the_wrong_length_or_shape_name_the_file(pairs, tmp_path):
    np.save(pairs / "episode_000000.npy", np.zeros((10, 2), np.float32))
    errors = _errors(_requests(VideoActionsBenchmark(str(pairs)), tmp_path))
    short = "episode_000000.npy: shape (10, 2); episode_000000.mp4 has 40 frames, so it needs 39 actions (one per step)"
    assert errors == {"episode_000000-t00000": short, "episode_000000-t00017": short}
    np.save(pairs / "episode_000000.npy", np.zeros((39, 3), np.float32))
    with pytest.raises(ConfigError, match=r"actions of different shapes \(\[\(2,\), \(3,\)\]\)"):
        VideoActionsBenchmark(str(pairs))


def test_declared_bounds_fail_the_samples_with_an_action_outside(pairs, tmp_path):
    actions = np.load(pairs / "episode_000001.npy")
    actions[3, 0] = 1.5
    np.save(pairs / "episode_000001.npy", actions)
    bench = VideoActionsBenchmark(str(pairs), action_low=[-1.0], action_high=[1.0])
    assert bench.spec.action_space.describe() == "continuous (2,) float32 in [-1, 1]"
    errors = _errors(_requests(bench, tmp_path))
    assert errors == {"episode_000001-t00000": "episode_000001.npy: action 3 element 0 = 1.5 is outside the declared "
                                               "bounds [-1, 1] (continuous (2,) float32 in [-1, 1])"}
    with pytest.raises(ConfigError, match=r"action_low/action_high: .*one per element \(2 for shape \[2\]\)"):
        VideoActionsBenchmark(str(pairs), action_low=[-1, -1, -1], action_high=[1, 1, 1])


def test_corrupt_video_is_the_episodes_input_error(pairs, tmp_path):
    (pairs / "episode_000000.mp4").write_bytes(b"\x00" * 500)
    errors = _errors(_requests(VideoActionsBenchmark(str(pairs)), tmp_path))
    # the actions say how long the episode is: each of its windows is an unreadable sample
    assert list(errors) == ["episode_000000-t00000", "episode_000000-t00017"]
    assert all("episode_000000.mp4: not a readable video" in e for e in errors.values())


# -- dataset folder with continuous actions ---------------------------------------------------------


@pytest.fixture
def folder(tmp_path, data):
    return write_folder(tmp_path / "folder", data)


def _rewrite(folder, change):
    lines = [json.loads(x) for x in (folder / "manifest.jsonl").read_text().splitlines()]
    change(lines)
    (folder / "manifest.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))


def test_folder_actions_against_the_declared_space_fail_their_own_sample(folder, tmp_path):
    def change(lines):
        lines[1]["actions"][5] = [0.5, 2.0]
        lines[2]["actions"][0] = [0.5]
    _rewrite(folder, change)
    bench = FolderBenchmark(str(folder))
    errors = _errors(_requests(bench, tmp_path))
    assert errors == {
        "episode_000000-t00017": "actions: action 5 element 1 (vy) = 2 is outside the declared bounds [-1, 1] "
                                 "(continuous (2,) float32 in [-1, 1])",
        "episode_000001-t00000": "actions: action 0 has shape (1,); the action space is (2,) "
                                 "(continuous (2,) float32 in [-1, 1])",
    }
    assert "manifest.jsonl:2: sample 'episode_000000-t00017': actions: action 5" in bench.report()


def test_folder_bad_action_space_in_dataset_json_is_a_config_error(folder):
    info = json.loads((folder / "dataset.json").read_text())
    (folder / "dataset.json").write_text(json.dumps({**info, "action_space": {"shape": [2], "low": 1, "high": -1}}))
    with pytest.raises(ConfigError, match=r"dataset.json: action_space: ActionSpace: low > high at element\(s\) \[0, 1\]"):
        FolderBenchmark(str(folder))


def test_folder_undeclared_ragged_vectors_are_the_samples_input_error(folder, tmp_path):
    (folder / "dataset.json").write_text(json.dumps({"fps": 10}))
    _rewrite(folder, lambda lines: lines[0]["actions"].__setitem__(4, [0.1, 0.2, 0.3]))
    errors = _errors(_requests(FolderBenchmark(str(folder)), tmp_path))
    assert errors == {"episode_000000-t00000": "actions: action 4 has shape (3,); the action space is (2,) "
                                               "(continuous (2,) float64, unbounded)"}


def test_a_config_error_of_a_reader_exits_2_with_one_paragraph(tmp_path, data):
    root = write_lerobot(tmp_path / "lr", data)
    proc = run_cli(["benchmark=lerobot", f"benchmark.dataset_root={root}", "benchmark.camera=wrist", "run.progress=off"],
                   cwd=tmp_path, env=cli_env(SVT_LOG="1"))
    assert proc.returncode == 2 and "Traceback" not in proc.stderr
    assert f"benchmark.camera: 'wrist' is neither a video nor an image feature of {root / 'meta' / 'info.json'}" \
        in proc.stderr
    shutil.rmtree(root)
