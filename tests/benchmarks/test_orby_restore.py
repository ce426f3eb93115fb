"""OrbySimulator.restore continues its own replay when the snapshot's actions extend the last ones (a model
played step by step restores one action more each time): every world it gives equals the snapshot's
actions replayed on a fresh world, whatever was restored before and whatever was done with the world."""

from __future__ import annotations

import numpy as np
import pytest

pytest.importorskip("tiny_jepa")


def _fresh(seed, actions):
    from tiny_jepa import OrbyWorld

    world = OrbyWorld(seed=seed)
    for action in actions:
        world.step(action)
    return world


def _same(world, other) -> bool:
    from wfeval.benchmarks.orby.simulator import state_of

    return (state_of(world) == state_of(other) and np.array_equal(world.render(), other.render())
            and world.rng.bit_generator.state == other.rng.bit_generator.state)


def test_a_restore_continued_from_the_last_one_is_the_replay_from_the_reset():
    from wfeval.benchmarks.orby import simulator

    actions = [int(a) for a in np.random.default_rng(3).integers(0, 5, 40)]
    sim = simulator.make({})
    for k in range(len(actions) + 1):  # one action more each time: continued, never replayed
        sim.restore({"seed": 7, "actions": actions[:k]})
        assert sim.snapshot() == {"seed": 7, "actions": actions[:k]}
        assert _same(sim.world, _fresh(7, actions[:k])), k
        sim.step((actions[k - 1] + 1) % 5)  # the world handed out moves on: the next restore is not served it
    # a branch (another action), a shorter prefix, another seed: each the replay from its reset
    for seed, branch in ((7, [*actions[:10], (actions[10] + 1) % 5]), (7, actions[:5]), (8, actions[:5]),
                         (7, actions)):
        sim.restore({"seed": seed, "actions": branch})
        assert _same(sim.world, _fresh(seed, branch)), (seed, len(branch))
        step = sim.step(2)
        expected = _fresh(seed, [*branch, 2])
        assert step.info["state"] == simulator.state_of(expected)
        assert np.array_equal(step.frame, simulator.to_uint8(expected.render()))


def test_a_snapshot_with_an_action_out_of_range_is_refused():
    from wfeval.benchmarks.orby import simulator

    with pytest.raises(ValueError, match="orby action 5 is not one of 0..4"):
        simulator.make({}).restore({"seed": 1, "actions": [0, 5]})


def test_restores_one_action_longer_each_time_make_one_world_and_step_each_action_once():
    from tiny_jepa import OrbyWorld

    from wfeval.benchmarks.orby import simulator

    made, stepped = [], []

    class Counting(OrbyWorld):
        def __init__(self, seed=None):
            made.append(seed)
            super().__init__(seed)

        def step(self, action):
            stepped.append(action)
            return super().step(action)

    sim = simulator.make({})
    sim._world_type = Counting
    actions = [1, 2, 3, 4, 0, 1, 2, 3]
    for k in range(len(actions) + 1):
        sim.restore({"seed": 4, "actions": actions[:k]})
    assert made == [4] and stepped == actions  # the old replay from the reset: 36 steps
    assert _same(sim.world, _fresh(4, actions))
