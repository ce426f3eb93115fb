"""locate_agent finds the built-in agent exactly; action_following scores moves and positions."""

from __future__ import annotations

import math

import numpy as np
import pytest
import torch

from wfeval.benchmarks.gridworld import world
from wfeval.functional import ColorLocator, action_following, control, implied_moves, locate_agent


def episode(seed: int, steps: int = 15):
    state = world.initial_state(seed)
    actions = world.sample_actions(seed + 1, steps)
    video, positions = world.rollout(state, actions)
    return state, actions, video, positions


def test_the_locator_conventions_are_the_built_in_world_s():
    assert control.GRIDWORLD_AGENT_COLOR == world.AGENT_COLOR
    assert control.GRIDWORLD_ACTIONS == world.ACTIONS
    for name, (dy, dx) in control.GRIDWORLD_MOVES.items():
        assert world._DELTAS[world.ACTIONS.index(name)] == (dy, dx)


@pytest.mark.parametrize("seed", range(8))
def test_locate_agent_returns_the_exact_top_left_pixel_of_every_frame(seed):
    _, _, video, positions = episode(seed)
    assert locate_agent(video) == [tuple(map(float, p)) for p in positions]
    assert locate_agent(video[3]) == tuple(map(float, positions[3]))
    assert locate_agent(torch.from_numpy(video)) == locate_agent(video)


def test_locate_agent_returns_none_where_the_agent_is_not_drawn():
    state, _, video, positions = episode(2)
    hidden = video.copy()
    y, x = positions[4]
    hidden[4, y:y + 8, x:x + 8] = (112, 132, 100)  # painted over with background colour
    found = locate_agent(hidden)
    assert found[4] is None and found[3] == tuple(map(float, positions[3]))
    assert locate_agent(np.zeros((8, 8, 3), np.uint8)) is None


def test_the_locator_tolerates_pixel_noise_within_half_a_pixel():
    _, _, video, positions = episode(5)
    noisy = np.clip(video + np.random.default_rng(0).normal(0, 30, video.shape), 0, 255).astype(np.uint8)
    for found, true in zip(ColorLocator()(noisy), positions):
        assert found is not None and math.dist(found, true) < 0.5


def test_implied_moves_pick_the_nearest_move_and_flag_jumps_and_gaps():
    track = [(8.0, 8.0), (0.5, 8.0), (0.5, 16.0), (0.5, 16.0), (24.0, 40.0), None, (0.0, 0.0)]
    assert implied_moves(track) == ["up", "right", "noop", "other", None, None]


def test_the_oracle_follows_every_action_with_zero_position_error():
    _, actions, video, positions = episode(7)
    out = action_following(video, actions, positions)
    assert (out.accuracy, out.steps, out.steps_correct) == (1.0, 15, 15)
    assert (out.position_error_px, out.position_error_found_px, out.frames_not_found) == (0.0, 0.0, 0)


def test_a_move_into_a_wall_is_expected_as_noop():
    spec = world.WorldSpec(n_walls=0, n_objects=0)
    state = world.WorldState(seed=0, spec=spec, agent=(0, 0), walls=((0, 1),), objects=())
    actions = [world.ACTIONS.index(a) for a in ("right", "up", "down", "left")]  # wall, border, free, border
    video, positions = world.rollout(state, actions)
    out = action_following(video, actions, positions)
    assert out.expected == ("noop", "noop", "down", "noop") and out.accuracy == 1.0
    without_track = action_following(video, actions)  # only the commanded actions to go by
    assert without_track.expected == ("right", "up", "down", "left") and without_track.accuracy == 0.25
    assert without_track.position_error_px is None


def test_a_frozen_video_is_right_only_on_the_steps_that_expect_no_move():
    _, actions, video, positions = episode(1)
    frozen = np.repeat(video[:1], len(video), axis=0)
    out = action_following(frozen, actions, positions)
    expected_noops = sum(np.array_equal(a, b) for a, b in zip(positions[:-1], positions[1:]))
    assert out.accuracy == expected_noops / 15 and set(out.implied) == {"noop"}
    assert out.position_error_px == pytest.approx(np.mean([math.dist(positions[0], p) for p in positions]))


def test_frames_without_the_agent_count_as_the_diagonal_and_their_steps_as_wrong():
    _, actions, video, positions = episode(3)
    hidden = video.copy()
    y, x = positions[6]
    hidden[6, y:y + 8, x:x + 8] = 0
    out = action_following(hidden, actions, positions)
    assert out.frames_not_found == 1 and out.implied[5] is None and out.implied[6] is None
    assert out.accuracy == 13 / 15
    assert out.position_error_px == pytest.approx(math.hypot(64, 64) / 16)
    assert out.position_error_found_px == 0.0 and out.per_frame_error_px[6] is None


def test_a_benchmark_can_plug_in_its_own_locator_or_inverse_dynamics():
    _, actions, video, positions = episode(4)
    blank = np.zeros_like(video)
    truth = [tuple(map(float, p)) for p in positions]
    assert action_following(blank, actions, positions, locator=lambda v: truth).accuracy == 1.0
    moves = action_following(video, actions, positions).expected
    out = action_following(blank, actions, positions, inverse_dynamics=lambda v: list(moves))
    assert out.accuracy == 1.0 and out.position_error_px is None
    with pytest.raises(ValueError, match="inverse_dynamics gave 2 moves for 15 steps"):
        action_following(video, actions, positions, inverse_dynamics=lambda v: ["noop", "up"])
    with pytest.raises(ValueError, match="the locator gave 3 positions for 16 frames"):
        action_following(video, actions, positions, locator=lambda v: truth[:3])


def test_a_batch_gives_one_result_per_video_and_lengths_are_checked():
    _, a1, v1, p1 = episode(1)
    _, a2, v2, p2 = episode(2)
    results = action_following(np.stack([v1, v2]), [a1, a2], [p1, p2])
    assert [r.accuracy for r in results] == [1.0, 1.0]
    with pytest.raises(ValueError, match="15 actions need 16 frames, got 15"):
        action_following(v1[:-1], a1, p1[:-1])


def _reference_locate(video, color=(225, 20, 20), tolerance=64.0, min_pixels=4, size=8):
    """The locator's definition, one frame at a time in float64 (its first implementation)."""
    mask = (np.abs(video.astype(np.float64) - np.asarray(color, dtype=np.float64)) <= tolerance).all(axis=-1)
    k = min(size, *mask.shape[1:])
    integral = np.pad(mask.cumsum(1).cumsum(2), ((0, 0), (1, 0), (1, 0)))
    boxes = integral[:, k:, k:] - integral[:, :-k, k:] - integral[:, k:, :-k] + integral[:, :-k, :-k]
    out = []
    for frame, box in zip(mask, boxes):
        y, x = np.unravel_index(int(box.argmax()), box.shape)
        if box[y, x] < min_pixels:
            out.append(None)
            continue
        y0, x0 = max(0, int(y) - 1), max(0, int(x) - 1)
        ys, xs = np.nonzero(frame[y0:y + k + 1, x0:x + k + 1])
        offset = (size - 1) / 2
        out.append((float(ys.mean()) + y0 - offset, float(xs.mean()) + x0 - offset))
    return out


@pytest.mark.parametrize("options", [{}, {"tolerance": 64.5}, {"tolerance": 30, "min_pixels": 1}, {"size": 5},
                                     {"size": 70}, {"tolerance": 0}, {"color": (225.5, 20, 20)}, {"min_pixels": 30}])
def test_the_locator_gives_its_per_frame_float64_definition_bit_for_bit(options):
    rng = np.random.default_rng(7)
    for seed, noise in enumerate((0, 20, 60, 90, 140)):
        _, _, video, _ = episode(seed, steps=40)
        noisy = np.clip(video.astype(int) + rng.integers(-noise, noise + 1, video.shape), 0, 255).astype(np.uint8)
        for frames in (noisy, noisy[:, :, ::-1], noisy.astype(np.float32)):  # a mirrored agent; a float video
            assert ColorLocator(**options)(frames) == _reference_locate(frames, **options)
