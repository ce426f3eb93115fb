"""pose_error's pose recovery: an exact frame is matched at once, known offsets are recovered to
within the search's resolution, and the baselines rank as designed."""

from __future__ import annotations

import math

import pytest

from tests.conftest import require_maze
from wfeval.benchmarks.memory_maze.pose import pose_offsets, recover_pose

# (dx, dy) in cells, heading offset in degrees: small ones near the resolution, and a large turn
OFFSETS = [(0.05, 0.0, 0.0), (0.0, -0.1, 0.0), (0.0, 0.0, 3.0), (0.0, 0.0, -10.0), (0.15, 0.1, 5.0),
           (0.0, 0.0, 60.0), (-0.25, 0.0, -20.0)]


@pytest.fixture(scope="module")
def maze():
    """A simulator standing in an open spot of a seeded maze, after a few steps of the behaviour policy."""
    require_maze()
    from wfeval.benchmarks.memory_maze import simulator
    from wfeval.benchmarks.memory_maze.policy import MazePolicy

    sim = simulator.make({})
    sim.reset(21)
    actor = MazePolicy().actor(21, 0, 40, 6)
    for t in range(40):
        sim.step(actor(t, sim))
    yield sim
    sim.close()


def test_an_exact_frame_is_matched_at_the_commanded_pose_with_one_render(maze):
    pose = maze.pose()
    found = recover_pose(lambda p: maze.render_pose(*p), maze.render_pose(*pose), pose)
    assert found.error == 0.0 and found.renders == 1
    assert pose_offsets(found.pose, pose)[0] == 0.0 and pose_offsets(found.pose, pose)[1] < 1e-9


@pytest.mark.parametrize("dx,dy,degrees", OFFSETS)
def test_a_known_offset_is_recovered_within_the_resolution(maze, dx, dy, degrees):
    x, y, h = maze.pose()
    shown = (x + dx, y + dy, h + math.radians(degrees))
    found = recover_pose(lambda p: maze.render_pose(*p), maze.render_pose(*shown), (x, y, h))
    position, heading = pose_offsets(found.pose, shown)
    assert position <= 0.03 and heading <= 2.0, (found, position, heading)
    # and what the metric reports is the offset itself
    reported = pose_offsets(found.pose, (x, y, h))
    assert abs(reported[0] - math.hypot(dx, dy)) <= 0.03 and abs(reported[1] - abs(degrees)) <= 2.0


def test_views_at_hand_cost_no_render_and_leave_the_recovered_pose_as_it_was(maze):
    """The reference video's frames are renders of the path's poses: a frame equal to one is that
    pose with no render (the commanded pose first among equal views); another frame is recovered as
    without the views, within the resolution, with fewer renders."""
    x, y, h = maze.pose()
    path = [(x - 0.3, y, h), (x - 0.15, y, h + 0.2), (x, y, h)]
    views = [maze.render_pose(*p) for p in path]
    render = lambda p: maze.render_pose(*p)  # noqa: E731
    frozen = recover_pose(render, views[0], path[-1], candidates=path, views=views)
    same = lambda a, b: max(pose_offsets(a, b)) < 1e-9  # noqa: E731 - equal up to the heading's wrapping
    assert same(frozen.pose, path[0]) and frozen.error == 0.0 and frozen.renders == 0
    twice = recover_pose(render, views[0], path[0], candidates=[path[1], path[0]], views=[views[0], views[0]])
    assert same(twice.pose, path[0]) and twice.renders == 0  # equal views: the commanded pose wins
    shown = (x - 0.1, y + 0.05, h + math.radians(8))
    frame = maze.render_pose(*shown)
    plain = recover_pose(render, frame, path[-1], candidates=path)
    cached = recover_pose(render, frame, path[-1], candidates=path, views=views)
    assert pose_offsets(cached.pose, shown)[0] <= 0.03 and pose_offsets(cached.pose, shown)[1] <= 2.0
    assert pose_offsets(plain.pose, shown)[0] <= 0.03
    assert cached.renders < plain.renders
