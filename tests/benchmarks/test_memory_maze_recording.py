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
from wfeval.storage.seal import unsealed_bytes

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


@pytest.mark.subprocess  # another process's recording
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
    assert unsealed_bytes(mine.read_bytes()) == unsealed_bytes(theirs.read_bytes())  # seals: per store


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


@pytest.mark.subprocess  # GL reads its vendor files when it loads: this process has loaded them
def test_without_a_renderer_a_run_stops_before_anything_is_built_naming_what_to_install(maze_store, tmp_path):
    from tests.conftest import run_fresh

    # glvnd pointed at no EGL vendor: as on a machine without Mesa's EGL
    env = cli_env(__EGL_VENDOR_LIBRARY_FILENAMES=str(tmp_path / "none.json"))
    proc = run_fresh(["-m", "wfeval", *MAZE_SMALL, "model=static", f"run.store_dir={tmp_path / 'store'}",
                      f"hydra.run.dir={tmp_path / 'run'}"], cwd=tmp_path, env=env)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "MuJoCo cannot render with MUJOCO_GL=egl here" in proc.stderr
    assert "apt-get install libegl1 libopengl0 libegl-mesa0 libgl1-mesa-dri" in proc.stderr
    assert "Traceback" not in proc.stderr and not (tmp_path / "store" / "recordings").exists()


# --- built episodes kept for reuse (simulator.EPISODES) --------------------------------------------

def _play(sim, request, steps: int = 12):
    """The sample's frames and poses after ``steps`` of its actions from its saved state."""
    sim.restore(request.metadata["simulator"]["state"])
    out = [sim.step(a) for a in request.controls["actions"][:steps]]
    return [s.frame for s in out], [s.info for s in out]


def _fresh_pool_counting_builds(monkeypatch) -> list:
    """An empty pool of 4 for this test, and the list of maze seeds built from now on."""
    from wfeval.benchmarks.memory_maze import simulator

    monkeypatch.setattr(simulator, "EPISODES", simulator._Episodes(4))
    builds: list = []
    real_build = simulator.MemoryMazeSimulator._build
    monkeypatch.setattr(simulator.MemoryMazeSimulator, "_build",
                        lambda self, seed: builds.append(seed) or real_build(self, seed))
    return builds


def test_a_closed_simulators_episode_is_taken_back_by_the_next_restore_and_continues_byte_for_byte(
        recorded, monkeypatch):
    """The oracle and pose_error of a run, or the runs of a sweep, restore the same maze again: the
    second simulator takes the first one's episode (no build) and plays as a freshly built one,
    even after the first ran to another sample and drew other poses."""
    from wfeval.benchmarks.memory_maze import simulator

    _, _, requests = recorded
    builds = _fresh_pool_counting_builds(monkeypatch)
    first = simulator.make({})
    _play(first, requests[3], steps=20)
    first.render_pose(*first.pose()[:2], 2.0)
    first.close()
    assert len(builds) == 1 and len(simulator.EPISODES) == 1

    second = simulator.make({})
    kept = _play(second, requests[1])
    assert len(builds) == 1 and len(simulator.EPISODES) == 0  # taken, not built
    second.close()

    monkeypatch.setattr(simulator, "EPISODES", simulator._Episodes(0))  # nothing kept: a fresh build
    fresh_sim = simulator.make({})
    fresh = _play(fresh_sim, requests[1])
    fresh_sim.close()
    assert len(builds) == 2
    reference = read_array(requests[1].references["video"])
    for k, (mine, theirs) in enumerate(zip(kept[0], fresh[0]), start=1):
        assert np.array_equal(mine, theirs) and np.array_equal(mine, reference[k]), k
    assert kept[1] == fresh[1]


def test_kept_episodes_are_bounded_per_config_and_seed_and_one_held_by_a_thread_is_freed(recorded, monkeypatch):
    import threading

    from wfeval.benchmarks.memory_maze import simulator

    _, _, requests = recorded
    state = requests[0].metadata["simulator"]["state"]
    pool = simulator._Episodes(1)
    monkeypatch.setattr(simulator, "EPISODES", pool)
    closed = []
    monkeypatch.setattr(simulator, "_close_env", lambda env: closed.append(env) or env.close())

    other = simulator.make({"camera_resolution": 32})  # another config: never handed this maze's episode
    other.restore(state)
    big = simulator.make({})
    big.restore(state)
    small_env = other._env
    other.close()
    assert len(pool) == 1 and pool.take(simulator.check_config({}), state["seed"]) is None
    big.close()  # the pool holds one: the older episode is freed
    assert closed == [small_env] and len(pool) == 1

    held = simulator.make({})
    held.restore(state)  # takes the kept episode back
    assert len(pool) == 0

    drawn, done = threading.Event(), threading.Event()

    def draw():  # another thread draws: the context is current there until that thread lets it go
        held.render_pose(*held.pose())
        drawn.set()
        done.wait(60)
        held.release_context()
    thread = threading.Thread(target=draw)
    thread.start()
    assert drawn.wait(60)
    env, config = held._env, held.config
    assert not simulator._context_free(env) and not pool.keep(config, state["seed"], env)  # not kept
    assert len(pool) == 0
    done.set()
    thread.join(60)
    assert not thread.is_alive() and simulator._context_free(env)
    held.close()  # now any thread may draw with it: kept
    assert len(pool) == 1 and pool.take(config, state["seed"]) is env
    env.close()


def test_a_forked_child_leaves_its_parents_kept_episodes_alone(recorded):
    """The module's own pool, through the hook it registers with os.register_at_fork: a child never draws
    with (or frees) its parent's GL contexts."""
    import os
    import select
    import signal

    from wfeval.benchmarks.memory_maze import simulator

    _, _, requests = recorded
    state = requests[0].metadata["simulator"]["state"]
    sim = simulator.make({})
    sim.restore(state)
    env = sim._env
    sim.close()
    kept = len(simulator.EPISODES)
    assert kept >= 1
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child
        os.write(write, str(len(simulator.EPISODES)).encode())
        os._exit(0)
    os.close(write)
    answered, _, _ = select.select([read], [], [], 60)  # a child stuck in its fork handlers fails the test
    if not answered:
        os.kill(pid, signal.SIGKILL)
    seen = os.read(read, 16).decode() if answered else "no answer in 60 s"
    os.waitpid(pid, 0)
    os.close(read)
    assert seen == "0" and len(simulator.EPISODES) == kept
    assert simulator.EPISODES.take(sim.config, state["seed"]) is env  # the parent's, untouched
    env.close()


def test_the_next_run_in_the_process_takes_pose_errors_episode_back_with_the_same_numbers(recorded, monkeypatch,
                                                                                            tmp_path):
    """pose_error's simulator is closed when the run's scoring ends (the pipeline closes each metric):
    the next run of the process restores the kept episode instead of building the maze again."""
    from wfeval.benchmarks.memory_maze import simulator
    from wfeval.pipeline.runner import run_from_config

    store, _, _ = recorded
    builds = _fresh_pool_counting_builds(monkeypatch)
    values = []
    for i in range(2):
        cfg = compose([*MAZE_SMALL, "model=blur", "run.limit=1", "metric=[pose_error]", "metric.pose_error.stride=16",
                       f"run.store_dir={store}", "run.progress=off", "run.report=false", "run.recompute=all"])
        summary = run_from_config(cfg, output_dir=tmp_path / f"run{i}")
        values.append(summary.results["memory_maze.pose_error"].diagnostics["value"])
        assert len(simulator.EPISODES) == 1, i  # handed back when the run ended
    assert len(builds) == 1 and values[0] == values[1] and values[0] < 1.0, (builds, values)


# --- the targets' contact check (simulator._target_touched) ----------------------------------------

def test_the_targets_contact_check_is_dm_controls_at_every_substep_of_walks_onto_every_target():
    """At every physics substep of walks onto each of the maze's targets in turn, the numpy check and
    dm_control's own ``TargetSphere._update_activation`` (run on the same state) activate the same targets
    and leave the same colours; every target is touched at least once."""
    from tests.conftest import require_maze

    require_maze()  # sets up the renderer before MuJoCo is imported
    from dm_control.locomotion.props.target_sphere import TargetSphere

    from wfeval.benchmarks.memory_maze import memory, policy, simulator

    sim = simulator.make({})
    sim.reset(3)
    checks, touched = [], set()

    def compare(target, physics):
        rgba = physics.bind(target._material).rgba
        before = (target._activated, rgba.copy())
        TargetSphere._update_activation(target, physics)
        theirs = (target._activated, rgba.copy())
        target._activated, rgba[:] = before
        simulator._target_touched(target, physics)
        assert target._activated == theirs[0] and np.array_equal(rgba, theirs[1])
        checks.append(target._activated)
        if target._activated and not before[0]:
            touched.add(target._geom_id)

    targets = sim._composer.task._targets
    assert all(t._update_activation.func is simulator._target_touched for t in targets)  # set by reset
    for t in targets:
        t._update_activation = lambda physics, t=t: compare(t, physics)
    layout = np.asarray(sim.state()["maze_layout"]).astype(bool)
    actions: list[int] = []
    try:
        for tx, ty in sim.state()["targets_pos"]:
            x, y, _ = sim.pose()
            for cx, cy in policy.shortest_path(layout, (int(x), int(y)), (int(tx), int(ty)))[1:]:
                memory._drive(sim, (cx + 0.5, cy + 0.5), actions, 40, close=0.3)
            memory._drive(sim, (tx, ty), actions, 20, close=0.1)
    finally:  # the episode goes to the process's pool: with its own check, as reset made it
        simulator._check_contacts_with_numpy(sim._composer.task)
        sim.close()
    assert touched == {t._geom_id for t in targets}, (touched, len(actions))
    assert len(checks) > 40 * len(actions) and checks.count(True) < len(checks)
