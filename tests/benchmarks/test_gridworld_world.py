"""Behavioural tests for the procedural grid-world simulator."""

from __future__ import annotations

import json

import numpy as np
import pytest

from wfeval.benchmarks.gridworld.world import (
    ACTIONS,
    AGENT_BORDER_COLOR,
    WorldSpec,
    WorldState,
    agent_color,
    initial_state,
    render,
    rollout,
    sample_actions,
    step,
)

NOOP, UP, DOWN, LEFT, RIGHT = range(5)
OPEN = WorldSpec(n_walls=0, n_objects=0)  # 8x8 grid of 8-px cells


def open_state(agent=(3, 3), walls=(), objects=(), seed=0, spec=OPEN) -> WorldState:
    """Hand-built state on the default 64x64 / 8-px grid."""
    return WorldState(seed=seed, spec=spec, agent=agent, walls=walls, objects=objects)


def agent_mask(frame: np.ndarray) -> np.ndarray:
    """Pixels exactly equal to the agent fill colour."""
    return np.all(frame == np.array(agent_color(), dtype=np.uint8), axis=-1)


def test_actions_are_named_in_id_order():
    assert ACTIONS == ("noop", "up", "down", "left", "right")


def test_same_seed_gives_identical_video_bytes():
    spec = WorldSpec(n_walls=8, n_objects=3)
    actions = sample_actions(7, 20)
    video_a, pos_a = rollout(initial_state(5, spec), actions)
    video_b, pos_b = rollout(initial_state(5, spec), list(actions))
    assert video_a.tobytes() == video_b.tobytes()
    assert np.array_equal(pos_a, pos_b)


def test_different_seeds_give_different_layouts_and_textures():
    layouts = {(s.agent, s.walls, s.objects) for s in (initial_state(seed) for seed in range(10))}
    assert len(layouts) == 10
    # Same layout, different seed: the background texture still differs.
    a, b = open_state(seed=0), open_state(seed=1)
    assert not np.array_equal(render(a), render(b))


def test_initial_state_places_everything_on_distinct_free_cells():
    spec = WorldSpec(n_walls=10, n_objects=4)
    for seed in range(20):
        state = initial_state(seed, spec)
        assert len(state.walls) == 10 and len(state.objects) == 4
        cells = [state.agent, *state.walls, *((r, c) for r, c, _, _ in state.objects)]
        assert len(set(cells)) == len(cells)
        assert all((dr, dc) != (0, 0) for _, _, dr, dc in state.objects)


def test_agent_pixel_position_follows_actions_in_open_area():
    state = open_state(agent=(3, 3))
    actions = [RIGHT, RIGHT, DOWN, NOOP, LEFT, UP, UP, UP]
    _, positions = rollout(state, actions)
    expected_cells = [(3, 3), (3, 4), (3, 5), (4, 5), (4, 5), (4, 4), (3, 4), (2, 4), (1, 4)]
    assert positions.dtype == np.int64
    assert positions.tolist() == [[8 * r, 8 * c] for r, c in expected_cells]


def test_walls_block_the_agent():
    state = open_state(agent=(3, 3), walls=((3, 4), (2, 3)))
    assert step(state, RIGHT).agent == (3, 3)
    assert step(state, UP).agent == (3, 3)
    assert step(state, LEFT).agent == (3, 2)
    assert step(state, DOWN).agent == (4, 3)


def test_border_blocks_the_agent():
    top_left = open_state(agent=(0, 0))
    assert step(top_left, UP).agent == (0, 0)
    assert step(top_left, LEFT).agent == (0, 0)
    bottom_right = open_state(agent=(7, 7))
    assert step(bottom_right, DOWN).agent == (7, 7)
    assert step(bottom_right, RIGHT).agent == (7, 7)
    _, positions = rollout(bottom_right, [RIGHT] * 3)
    assert positions.tolist() == [[56, 56]] * 4


def _object_track(state: WorldState, n: int) -> list[tuple[int, int, int, int]]:
    track = [state.objects[0]]
    for _ in range(n):
        state = step(state, NOOP)
        track.append(state.objects[0])
    return track


def test_objects_bounce_off_borders():
    state = open_state(agent=(0, 0), objects=((6, 6, 1, 1),))
    assert _object_track(state, 3) == [(6, 6, 1, 1), (7, 7, 1, 1), (6, 6, -1, -1), (5, 5, -1, -1)]


def test_objects_bounce_off_walls_and_border_along_a_row():
    state = open_state(agent=(0, 0), walls=((3, 4),), objects=((3, 1, 0, 1),))
    assert _object_track(state, 6) == [
        (3, 1, 0, 1),
        (3, 2, 0, 1),
        (3, 3, 0, 1),
        (3, 2, 0, -1),  # wall at (3, 4): reverse and move away
        (3, 1, 0, -1),
        (3, 0, 0, -1),
        (3, 1, 0, 1),  # left border
    ]


def test_objects_reverse_in_place_on_diagonal_corner_hit():
    state = open_state(agent=(0, 0), walls=((3, 3),), objects=((2, 2, 1, 1),))
    assert _object_track(state, 2) == [(2, 2, 1, 1), (2, 2, -1, -1), (1, 1, -1, -1)]


def test_objects_and_agent_pass_through_each_other():
    state = open_state(agent=(3, 3), objects=((3, 5, 0, -1),))
    nxt = step(state, RIGHT)
    assert nxt.agent == (3, 4) and nxt.objects[0][:2] == (3, 4)


def test_rollout_frame_zero_equals_render_and_shapes():
    spec = WorldSpec(height=48, width=80, cell=8, n_walls=5, n_objects=2)
    state = initial_state(3, spec)
    video, positions = rollout(state, sample_actions(3, 9))
    assert video.shape == (10, 48, 80, 3) and video.dtype == np.uint8
    assert positions.shape == (10, 2)
    assert np.array_equal(video[0], render(state))
    assert positions[0].tolist() == [8 * state.agent[0], 8 * state.agent[1]]


def test_rollout_with_no_actions_returns_single_frame():
    state = initial_state(0)
    video, positions = rollout(state, [])
    assert video.shape == (1, 64, 64, 3) and positions.shape == (1, 2)


def test_background_is_textured_not_flat():
    frame = render(open_state())
    assert frame.reshape(-1, 3).std(axis=0).min() > 3.0
    assert len(np.unique(frame.reshape(-1, 3), axis=0)) > 50


def test_agent_colour_appears_only_in_agent_cell_interior():
    spec = WorldSpec(n_walls=10, n_objects=6)
    for seed in range(8):
        video, positions = rollout(initial_state(seed, spec), sample_actions(seed, 12))
        for frame, (y, x) in zip(video, positions):
            expected = np.zeros(frame.shape[:2], dtype=bool)
            expected[y + 1 : y + 7, x + 1 : x + 7] = True
            assert np.array_equal(agent_mask(frame), expected)
            border = np.all(frame[y : y + 8, x : x + 8] == AGENT_BORDER_COLOR, axis=-1)
            assert border.sum() == 8 * 8 - 6 * 6
            # Nothing outside the agent cell is red-dominant either.
            rgb = frame.astype(int)
            red_dominant = rgb[..., 0] - rgb[..., 1:].max(axis=-1) > 60
            outside = np.ones_like(expected)
            outside[y : y + 8, x : x + 8] = False
            assert not red_dominant[outside].any()


def test_agent_is_drawn_over_an_overlapping_object():
    state = open_state(agent=(2, 2), objects=((2, 2, 0, 0),))
    mask = agent_mask(render(state))
    assert mask.sum() == 36 and mask[17:23, 17:23].all()


def test_state_round_trips_through_json():
    state = initial_state(11, WorldSpec(height=32, width=48, cell=4, n_walls=7, n_objects=3))
    data = json.loads(json.dumps(state.to_dict()))
    assert data["spec"]["cell"] == 4 and data["agent"] == list(state.agent)
    restored = WorldState.from_dict(data)
    assert restored == state
    assert np.array_equal(render(restored), render(state))


def test_sample_actions_deterministic_in_range_and_prefix_stable():
    a = sample_actions(42, 200)
    assert a == sample_actions(42, 200)
    assert a != sample_actions(43, 200)
    assert all(isinstance(x, int) and 0 <= x < len(ACTIONS) for x in a)
    assert set(a) == set(range(len(ACTIONS)))
    assert sample_actions(42, 50) == a[:50]
    assert sample_actions(42, 0) == ()


def test_sample_actions_repeat_probability_extremes():
    always = sample_actions(1, 30, p_repeat=1.0)
    assert len(set(always)) == 1
    never = sample_actions(1, 2000, p_repeat=0.0)
    repeats = sum(x == y for x, y in zip(never, never[1:])) / (len(never) - 1)
    assert 0.1 < repeats < 0.3  # ~1/5 by chance alone


def test_invalid_action_id_error_names_value_and_range():
    state = open_state()
    with pytest.raises(ValueError, match=r"action=5 .*\[0, 4\]"):
        step(state, 5)
    with pytest.raises(ValueError, match=r"actions\[2\]=-1 .*\[0, 4\]"):
        rollout(state, [1, 2, -1, 3])
    with pytest.raises(ValueError, match="action"):
        step(state, 1.0)


@pytest.mark.parametrize(
    "kwargs, message",
    [
        ({"height": 60}, "multiple of cell"),
        ({"width": 70}, "multiple of cell"),
        ({"cell": 2}, "cell must be >= 3"),
        ({"n_walls": -1}, "n_walls"),
        ({"n_objects": 7}, "distinct object colours"),
        ({"height": 16, "width": 16, "n_walls": 4}, "too few"),
    ],
)
def test_invalid_spec_raises(kwargs, message):
    with pytest.raises(ValueError, match=message):
        WorldSpec(**kwargs)


def test_invalid_state_raises():
    with pytest.raises(ValueError, match="outside"):
        open_state(agent=(8, 0))
    with pytest.raises(ValueError, match="on a wall"):
        open_state(agent=(1, 1), walls=((1, 1),))
    with pytest.raises(ValueError, match="velocity"):
        open_state(objects=((0, 0, 2, 0),))
    with pytest.raises(ValueError, match="unknown WorldSpec fields"):
        WorldState.from_dict({**open_state().to_dict(), "spec": {"colour": 1}})
    with pytest.raises(ValueError, match="seed"):
        initial_state(-1)
