"""wfeval.recipes.data.record's recordings written to disk and read back (issue 50, item 7): the
arrays file as it was, the HDF5 file through benchmark=hdf5 and the LeRobot v3 dataset through
benchmark=lerobot, with the same frames and actions in every window."""

from __future__ import annotations

import numpy as np
import pytest

from wfeval.benchmarks.gridworld import GridworldBenchmark
from wfeval.recipes import data
from wfeval.recipes.data_files import load_arrays, save_arrays, save_hdf5, save_lerobot

HORIZON = 6


@pytest.fixture(scope="module")
def recording():
    return data.record(GridworldBenchmark(num_samples=8), episodes=3, steps=13, seed=5)


def _windows(bench, tmp_path):
    """(episode index, first frame, reference frames, actions) of each window the reader cuts."""
    from wfeval.api import EvaluationProtocolSpec, WorldTaskConfig
    from wfeval.models.base import actions_of
    from wfeval.storage.artifacts import ArtifactStore, read_array

    requests = bench.requests(store=ArtifactStore(tmp_path / "store"), task=WorldTaskConfig(name="action_video"),
                              protocol=EvaluationProtocolSpec(name="open_loop"))
    out = []
    for r in requests:
        assert "input_error" not in r.metadata, r.metadata.get("input_error")
        episode = int(r.metadata["episode"].rsplit("_", 1)[1])
        out.append((episode, r.metadata["start_frame"], read_array(r.references["video"]),
                    np.asarray(actions_of(r))))
    return out


def _same_as_recorded(windows, rec):
    assert len(windows) == 3 * 2  # 14 frames, windows of 1 + 6 frames: 2 per episode
    for episode, b, reference, actions in windows:
        np.testing.assert_array_equal(reference, rec.frames[episode, b:b + HORIZON + 1])
        np.testing.assert_array_equal(actions.reshape(-1), rec.actions[episode, b:b + HORIZON])


def test_the_arrays_file_is_the_recording_as_it_was(recording, tmp_path):
    back = load_arrays(save_arrays(recording, tmp_path / "rec.npz"))
    np.testing.assert_array_equal(back.frames, recording.frames)
    np.testing.assert_array_equal(back.actions, recording.actions)
    assert (back.action_names, back.seeds, back.info) == (recording.action_names, recording.seeds, recording.info)
    assert back.data_hash() == recording.data_hash()


def test_benchmark_hdf5_reads_the_recording_with_its_frames_and_actions(recording, tmp_path):
    from wfeval.benchmarks.episodes import HDF5Benchmark

    bench = HDF5Benchmark(str(save_hdf5(recording, tmp_path / "rec.hdf5")), horizon=HORIZON, fps=8)
    assert [e.name for e in bench.episodes] == ["demo_0", "demo_1", "demo_2"]
    _same_as_recorded(_windows(bench, tmp_path), recording)


def test_benchmark_lerobot_reads_the_v3_dataset_with_its_frames_and_actions(recording, tmp_path):
    import json

    from wfeval.benchmarks.episodes import LeRobotBenchmark

    root = save_lerobot(recording, tmp_path / "lerobot", fps=8)
    info = json.loads((root / "meta" / "info.json").read_text())
    assert info["codebase_version"] == "v3.0" and info["total_frames"] == 3 * 14
    assert (root / "data" / "chunk-000" / "file-000.parquet").is_file()
    bench = LeRobotBenchmark(str(root), horizon=HORIZON)
    assert bench.fps == 8 and [e.name for e in bench.episodes] == [f"episode_{k:06d}" for k in range(3)]
    _same_as_recorded(_windows(bench, tmp_path), recording)


def test_state_true_records_a_games_exact_state_of_every_frame_as_its_simulator_reads_it():
    """Simulator truth: replaying the recorded actions from the episode's seed reads the same state and
    frame at every step; the default (discrete actions) records none, and hashes as before."""
    from tests.conftest import compose
    from wfeval.pipeline import build

    bench = build.build_benchmark(compose(["benchmark=orby"]))
    assert bench.warmup_steps == 0 and bench.resize is None
    rec = data.record(bench, episodes=2, steps=5, state=True)
    assert rec.state.shape == (2, 6, len(rec.state_names)) and rec.state_names[:2] == ("agent_x", "agent_y")
    assert rec.state_names == tuple(v.name for v in bench.state_variables()) and rec.action_space is None
    sim = bench.simulator()
    for e, seed in enumerate(rec.seeds):
        np.testing.assert_array_equal(sim.reset(seed), rec.frames[e, 0])
        np.testing.assert_array_equal(sim.state(), rec.state[e, 0])
        for t, action in enumerate(rec.actions[e]):
            np.testing.assert_array_equal(sim.step(int(action)).frame, rec.frames[e, t + 1])
            np.testing.assert_array_equal(sim.state(), rec.state[e, t + 1])
    bench.close()
    plain = data.record(bench, episodes=2, steps=5)
    assert plain.state is None and plain.data_hash() != rec.data_hash()
    np.testing.assert_array_equal(plain.frames, rec.frames)
