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
