"""wfeval.recipes.data.record on benchmark=pusht (issue 48, item 4): episodes of the recipe's own seeds
driven by the benchmark's behaviour policy, float32 target positions in the declared action space, and
the exact state of every frame; the hash of a discrete recording without state is what it always was."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.conftest import compose
from wfeval.pipeline import build
from wfeval.recipes import data

EPISODES, STEPS = 2, 8


@pytest.fixture(scope="module")
def bench():
    pytest.importorskip("gym_pusht")
    return build.build_benchmark(compose(["benchmark=pusht"]))


@pytest.fixture(scope="module")
def recording(bench):
    return data.record(bench, episodes=EPISODES, steps=STEPS, seed=3)


def test_a_pusht_recording_holds_float32_target_positions_in_the_declared_space_and_the_state_of_every_frame(
        recording, bench):
    assert recording.frames.shape == (EPISODES, STEPS + 1, 96, 96, 3) and recording.frames.dtype == np.uint8
    assert recording.actions.shape == (EPISODES, STEPS, 2) and recording.actions.dtype == np.float32
    assert recording.is_continuous and recording.action_space == bench.spec.action_space.to_dict()
    assert recording.action_names == ("target_x", "target_y")
    assert ((recording.actions >= 0) & (recording.actions <= 512)).all()
    assert recording.state.shape == (EPISODES, STEPS + 1, 6) and recording.state.dtype == np.float64
    assert recording.state_names == ("agent_x", "agent_y", "block_x", "block_y", "block_sin", "block_cos")
    assert recording.info["policy"]["kind"] == "pusher" and recording.info["warmup_steps"] == 4


def test_the_episodes_come_from_the_recipe_namespace_never_an_evaluation_seed(recording, bench):
    evaluation = {bench.trajectory_seed(i) for i in range(bench.num_trajectories)}
    assert recording.seeds == [data.episode_seed("pusht", 3, i) for i in range(EPISODES)]
    assert not evaluation & set(recording.seeds) and recording.info["dropped_seeds"] == 0


def test_each_recorded_state_places_the_world_where_the_recorded_frame_shows_it(recording):
    """Simulator truth: the world placed at a frame's state (agent, block, angle from sin/cos) renders
    that frame (but for a few edge pixels: the angle's last bits), and the agent follows the targets."""
    from wfeval.benchmarks.pusht.simulator import PushTSimulator

    sim = PushTSimulator(96)
    for e in range(EPISODES):
        for t in (0, STEPS // 2, STEPS):
            ax, ay, bx, by, s, c = recording.state[e, t]
            placed = sim.place([ax, ay, bx, by, math.atan2(s, c)]).astype(int)
            differ = np.abs(placed - recording.frames[e, t]).max(axis=-1)
            assert (differ > 0).sum() <= 8, (e, t, int((differ > 0).sum()))
    assert np.allclose(recording.state[..., 4] ** 2 + recording.state[..., 5] ** 2, 1.0)
    moved = np.linalg.norm(np.diff(recording.state[:, :, :2], axis=1), axis=-1)
    assert moved.mean() > 1.0  # the agent moves towards its targets, a few px a step


def test_a_recording_made_again_is_the_same_and_hashes_its_actions_space_and_state(recording, bench):
    again = data.record(bench, episodes=EPISODES, steps=STEPS, seed=3)
    assert again.data_hash() == recording.data_hash()
    stateless = data.record(bench, episodes=EPISODES, steps=STEPS, seed=3, state=False)
    assert stateless.state is None and stateless.state_names == ()
    np.testing.assert_array_equal(stateless.frames, recording.frames)
    assert stateless.data_hash() != recording.data_hash()  # the state is part of what the hash covers


def test_a_discrete_recording_without_state_hashes_as_it_did_before_state_and_continuous_actions():
    from wfeval.benchmarks.gridworld import GridworldBenchmark

    rec = data.record(GridworldBenchmark(num_samples=8), episodes=3, steps=13, seed=5)
    assert rec.action_space is None and rec.state is None
    # the sha256 this recording had before Recording gained action_space and state (commit bbe009d)
    assert rec.data_hash() == "dd9709b66a9a25873bd7fd6998d745ecf13780bb27382c4b6105e3f4f90ad90d"
    with pytest.raises(ValueError, match="gridworld recorder does not read the world's state"):
        data.record(GridworldBenchmark(num_samples=8), episodes=1, steps=1, state=True)


# -- the recording as the community's data: a LeRobot v3 dataset read back by benchmark=lerobot -----------


@pytest.fixture(scope="module")
def exported(recording, tmp_path_factory):
    from wfeval.recipes.data_files import save_lerobot

    return save_lerobot(recording, tmp_path_factory.mktemp("pusht") / "lerobot", fps=10)


def _lerobot(root, *overrides):
    return build.build_benchmark(compose(["benchmark=lerobot", f"benchmark.dataset_root={root}",
                                          "benchmark.horizon=4", "benchmark.stride=4", *overrides]))


def test_the_lerobot_export_declares_float32_actions_and_state_named_after_the_recording(exported, recording):
    import json

    info = json.loads((exported / "meta" / "info.json").read_text())
    assert info["features"]["action"] == {"dtype": "float32", "shape": [2], "names": ["target_x", "target_y"]}
    assert info["features"]["observation.state"] == {"dtype": "float32", "shape": [6],
                                                     "names": list(recording.state_names)}
    assert info["features"]["observation.image"]["dtype"] == "image" and info["total_frames"] == EPISODES * 9
    stats = json.loads((exported / "meta" / "stats.json").read_text())
    np.testing.assert_allclose(stats["observation.state"]["mean"], recording.state.reshape(-1, 6).mean(axis=0),
                               rtol=1e-6)
    assert stats["action"]["count"] == [EPISODES * 9] and len(stats["observation.image"]["mean"]) == 3


def test_benchmark_lerobot_materializes_the_recorded_frames_and_actions_byte_for_byte(exported, recording,
                                                                                         tmp_path):
    from wfeval.models.base import actions_of
    from wfeval.storage.artifacts import ArtifactStore, read_array

    lerobot = _lerobot(exported)
    assert lerobot.spec.action_space.describe() == "continuous (2,) float32, unbounded"
    assert lerobot.spec.action_space.names == ("target_x", "target_y")
    cfg = compose(["benchmark=lerobot", f"benchmark.dataset_root={exported}"])
    requests = lerobot.requests(store=ArtifactStore(tmp_path), task=build.build_task(cfg),
                                protocol=build.build_protocol(cfg))
    assert len(requests) == EPISODES * 2  # windows of 1 + 4 frames at frames 0 and 4: every frame, every action
    for r in requests:
        assert "input_error" not in r.metadata, r.metadata["input_error"]
        e, b = int(r.metadata["episode"].rsplit("_", 1)[1]), r.metadata["start_frame"]
        video = read_array(r.references["video"])
        assert video.dtype == np.uint8 and video.tobytes() == recording.frames[e, b:b + 5].tobytes()
        assert read_array(r.inputs["image"]).tobytes() == recording.frames[e, b].tobytes()
        actions = np.asarray(actions_of(r), dtype=np.float64)
        assert actions.shape == (4, 2)
        np.testing.assert_array_equal(actions.astype(np.float32), recording.actions[e, b:b + 4])
        np.testing.assert_array_equal(actions, recording.actions[e, b:b + 4].astype(np.float64))  # float32 exact


def test_task_probing_on_the_export_reads_the_recorded_state_of_every_frame(exported, recording, tmp_path):
    from wfeval.storage.artifacts import ArtifactStore

    cfg = compose(["task=probing", "benchmark=lerobot", f"benchmark.dataset_root={exported}"])
    lerobot = _lerobot(exported, "task=probing")
    assert [v.name for v in lerobot.state_variables()] == [f"observation.state[{n}]" for n in recording.state_names]
    requests = lerobot.requests(store=ArtifactStore(tmp_path), task=build.build_task(cfg),
                                protocol=build.build_protocol(cfg))
    windows = [lerobot.probe_episode(r) for r in requests] + lerobot.probe_training(8, 5)
    assert len(windows) == EPISODES * 2  # one episode's windows are scored, the other's train the probes
    seen = set()
    for w in windows:
        e, b = next((e, b) for e in range(EPISODES) for b in (0, 4)
                    if w.frames.tobytes() == recording.frames[e, b:b + 5].tobytes())
        seen.add((e, b))
        np.testing.assert_array_equal(w.states, recording.state[e, b:b + 5].astype(np.float32).astype(np.float64))
        np.testing.assert_array_equal(np.asarray(w.actions, np.float32), recording.actions[e, b:b + 4])
    assert seen == {(e, b) for e in range(EPISODES) for b in (0, 4)}


def test_the_arrays_file_and_the_hdf5_file_carry_the_actions_space_and_state(recording, tmp_path):
    from wfeval.benchmarks.episodes import HDF5Benchmark
    from wfeval.recipes.data_files import load_arrays, save_arrays, save_hdf5

    back = load_arrays(save_arrays(recording, tmp_path / "rec.npz"))
    assert back.actions.dtype == np.float32 and back.action_space == recording.action_space
    np.testing.assert_array_equal(back.state, recording.state)
    assert back.state_names == recording.state_names and back.data_hash() == recording.data_hash()
    hdf5 = HDF5Benchmark(str(save_hdf5(recording, tmp_path / "rec.hdf5")), camera="agentview_image", fps=10,
                         horizon=4, stride=4)
    assert [v.name for v in hdf5.state_variables()] == sorted(recording.state_names)  # one obs/<name> each
    order = [sorted(recording.state_names).index(n) for n in recording.state_names]
    windows = hdf5.probe_training(4, 5)
    assert len(windows) == 2  # the training episode's two windows
    for w in windows:
        e, b = next((e, b) for e in range(EPISODES) for b in (0, 4)
                    if w.frames.tobytes() == recording.frames[e, b:b + 5].tobytes())
        np.testing.assert_array_equal(w.states[:, order], recording.state[e, b:b + 5])  # float64, exact
        np.testing.assert_array_equal(np.asarray(w.actions, np.float32), recording.actions[e, b:b + 4])


# -- the command: python -m wfeval.recipes.record ----------------------------------------------------------


def _probing(tmp_path, name, root, model):
    import json

    from wfeval.pipeline.runner import run_from_config

    run_from_config(compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false",
                             "task=probing", "benchmark=lerobot", f"benchmark.dataset_root={root}",
                             "protocol.horizons=[1]", f"model={model}"]), output_dir=tmp_path / name)
    return json.loads((tmp_path / name / "results.json").read_text())["results"]["lerobot.probe_r2"]


def test_the_record_command_writes_a_lerobot_dataset_whose_state_task_probing_scores_against(bench, tmp_path):
    import json

    from tests.conftest import cli_env, run_python

    out = tmp_path / "pusht_lerobot"
    done = run_python(["-m", "wfeval.recipes.record", "benchmark=pusht", f"out={out}", "episodes=4", "steps=33"],
                      cwd=tmp_path, env=cli_env())
    assert done.returncode == 0, done.stderr
    assert f"read it back: python -m wfeval benchmark=lerobot benchmark.dataset_root={out}" in done.stdout
    sidecar = json.loads((out / "recording.json").read_text())
    assert sidecar["format"] == "lerobot" and sidecar["episodes"] == 4 and len(sidecar["seeds"]) == 4
    assert sidecar["data_sha256"] == data.record(bench, episodes=4, steps=33, seed=0).data_hash()
    # 34 frames an episode: two windows of 1 + 16 frames; two episodes train the probes, two are scored
    oracle = _probing(tmp_path, "oracle", out, "state_oracle")
    projection = _probing(tmp_path, "projection", out, "random_projection")
    print("probe_r2: state_oracle", oracle["normalized_stats"]["mean"], "random_projection",
          projection["normalized_stats"]["mean"])
    assert oracle["n_valid"] == 4 and oracle["normalized_stats"]["mean"] == pytest.approx(1.0, abs=1e-6)
    assert projection["n_valid"] == 4 and projection["normalized_stats"]["mean"] < 0.9


@pytest.mark.parametrize("override, key", [("format=mp4", "format:"), ("state=maybe", "state:"), ("fps=0", "fps:"),
                                           ("steps=0", "steps:")])
def test_the_record_command_exits_2_naming_the_key_of_a_bad_option(override, key, tmp_path):
    from tests.conftest import cli_env, run_python

    done = run_python(["-m", "wfeval.recipes.record", "benchmark=gridworld", f"out={tmp_path / 'x'}", override],
                      cwd=tmp_path, env=cli_env())
    assert done.returncode == 2 and f"Config error: {key}" in done.stderr and "Traceback" not in done.stderr, done.stderr


def test_the_record_command_refuses_a_folder_that_holds_something(tmp_path):
    from tests.conftest import cli_env, run_python

    (tmp_path / "taken").mkdir()
    (tmp_path / "taken" / "keep.txt").write_text("mine")
    done = run_python(["-m", "wfeval.recipes.record", f"out={tmp_path / 'taken'}", "episodes=1", "steps=1"],
                      cwd=tmp_path, env=cli_env())
    assert done.returncode == 2 and "out:" in done.stderr and (tmp_path / "taken" / "keep.txt").read_text() == "mine"
