"""Memory Maze recording: identical in another process, cached by content, the exact state in every
sample, snapshots that continue byte for byte, any pose rendered, episodes that explore and come back."""

from __future__ import annotations

import math
import subprocess
import sys

import numpy as np
import pytest

from tests.conftest import MAZE_SMALL, ROOT, cli_env, compose
from wfeval.config.errors import ConfigError
from wfeval.pipeline import build
from wfeval.results import dataset_hash
from wfeval.storage.artifacts import ArtifactStore, read_array

PROBE = """
import sys
sys.path[:0] = [{root!r}, {tests!r}]
from conftest import compose
from wfeval.storage.artifacts import ArtifactStore
from wfeval.pipeline import build
from wfeval.results import dataset_hash
cfg = compose({overrides!r})
bench = build.build_benchmark(cfg)
requests = bench.requests(store=ArtifactStore(sys.argv[1]), task=build.build_task(cfg),
                          protocol=build.build_protocol(cfg))
print("HASH", dataset_hash(requests))
"""


def _requests(store_dir, *overrides):
    cfg = compose([*MAZE_SMALL, *overrides])
    bench = build.build_benchmark(cfg)
    return bench, bench.requests(store=ArtifactStore(store_dir), task=build.build_task(cfg),
                                 protocol=build.build_protocol(cfg))


@pytest.fixture(scope="module")
def recorded(maze_store):
    bench, requests = _requests(maze_store)
    return maze_store, bench, requests


def test_a_recording_is_byte_identical_in_another_process(recorded, tmp_path):
    store, bench, requests = recorded
    code = PROBE.format(root=str(ROOT), tests=str(ROOT / "tests"), overrides=MAZE_SMALL)
    proc = subprocess.run([sys.executable, "-c", code, str(tmp_path / "other")], env=cli_env(), cwd=tmp_path,
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-2000:]
    assert f"HASH {dataset_hash(requests)}" in proc.stdout
    key = bench.recording_key(0)
    mine = store / "recordings" / "memory_maze" / key[:2] / f"{key}.json"
    theirs = tmp_path / "other" / "recordings" / "memory_maze" / key[:2] / f"{key}.json"
    assert mine.read_bytes() == theirs.read_bytes()


def test_a_second_build_is_served_by_the_cache(recorded):
    store, _, requests = recorded
    bench, again = _requests(store)
    assert bench.stats["recorded"] == 0 and bench.stats["cached"] == 1
    assert dataset_hash(again) == dataset_hash(requests)


def test_every_sample_carries_the_exact_state(recorded):
    _, bench, requests = recorded
    assert [r.sample_id for r in requests] == [f"memory_maze-test-0000-{w:02d}" for w in range(4)]
    for request in requests:
        maze, info = request.metadata["maze"], request.metadata["step_info"]
        layout = np.asarray(maze["maze_layout"])
        assert layout.shape == (9, 9) and set(np.unique(layout)) <= {0, 1}
        assert len(maze["targets_pos"]) == len(maze["target_colors"]) == 3
        assert {len(info[k]) for k in ("x", "y", "heading", "target_index", "qpos")} == {16}
        for x, y in zip(info["x"], info["y"]):  # the agent stands on floor cells inside the maze
            assert 0 < x < 9 and 0 < y < 9 and layout[int(y), int(x)] == 1
        assert read_array(request.references["video"]).shape == (17, 64, 64, 3)
        assert list(request.controls["action_names"]) == ["noop", "forward", "left", "right", "forward_left",
                                                    "forward_right"]
    assert bench.identity["renderer"]["gl"]["renderer"]  # what drew the pixels is recorded


def test_a_restored_snapshot_continues_byte_for_byte_and_any_pose_renders_without_side_effects(recorded):
    from wfeval.benchmarks.memory_maze import simulator

    _, _, requests = recorded
    request = requests[2]
    reference = read_array(request.references["video"])
    sim = simulator.make({})
    try:
        sim.restore(request.metadata["simulator"]["state"])
        info = request.metadata["step_info"]
        for k, action in enumerate(request.controls["actions"][:8], start=1):
            if k == 4:  # a render at another pose in between changes nothing that follows
                x, y, h = sim.pose()
                sim.render_pose(x + 0.3, y - 0.2, h + 1.0)
            step = sim.step(action)
            assert np.array_equal(step.frame, reference[k]), k
            assert step.info["qpos"] == list(info["qpos"][k - 1])
            pose = (info["x"][k - 1], info["y"][k - 1], info["heading"][k - 1])
            assert np.array_equal(sim.render_pose(*pose, qpos=info["qpos"][k - 1]), reference[k]), k
    finally:
        sim.close()


def test_a_trajectory_longer_than_one_episode_is_refused():
    with pytest.raises(ConfigError, match="does not fit in one 9×9 Memory Maze episode"):
        build.build_benchmark(compose(["benchmark=memory_maze", "benchmark.horizon=300"]))


def test_an_unknown_maze_size_is_a_config_error():
    with pytest.raises(ConfigError, match="benchmark.env.size must be one of"):
        build.build_benchmark(compose(["benchmark=memory_maze", "benchmark.env.size=10"]))


def test_the_behaviour_policy_explores_and_comes_back(maze_store):
    """A long sample (256 steps): many cells visited, and cells left and entered again after gaps
    from a few to hundreds of steps — what a memory task needs."""
    cfg = compose(["benchmark=memory_maze_long", "benchmark.num_trajectories=1"])
    bench = build.build_benchmark(cfg)
    [request] = bench.requests(store=ArtifactStore(maze_store), task=build.build_task(cfg),
                               protocol=build.build_protocol(cfg))
    info = request.metadata["step_info"]
    cells = [(int(x), int(y)) for x, y in zip(info["x"], info["y"])]
    assert len(cells) == 256 and read_array(request.references["video"]).shape == (257, 64, 64, 3)
    assert len(set(cells)) >= 15
    last, gaps, previous = {}, [], None
    for t, cell in enumerate(cells):
        if cell != previous and cell in last:
            gaps.append(t - last[cell])
        last[cell], previous = t, cell
    assert len(gaps) >= 5 and min(gaps) < 30 and max(gaps) >= 100, gaps
    headings = np.unwrap(np.asarray(info["heading"]))
    assert np.ptp(headings) > math.pi  # it turns around, too


def test_without_a_renderer_a_run_stops_before_anything_is_built_naming_what_to_install(maze_store, tmp_path):
    from tests.conftest import run_cli

    # glvnd pointed at no EGL vendor: as on a machine without Mesa's EGL
    env = cli_env(__EGL_VENDOR_LIBRARY_FILENAMES=str(tmp_path / "none.json"))
    proc = run_cli([*MAZE_SMALL, "model=static", f"run.store_dir={tmp_path / 'store'}",
                    f"hydra.run.dir={tmp_path / 'run'}"], cwd=tmp_path, env=env)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "MuJoCo cannot render with MUJOCO_GL=egl here" in proc.stderr
    assert "apt-get install libegl1 libopengl0 libegl-mesa0 libgl1-mesa-dri" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "store" / "recordings").exists()
