"""task=memory on Memory Maze (issue 33): legs planned from the exact state come back to their start
pose within the stated tolerance in the simulator, the masks leave out only the target-colour border,
revisit_error measures the model's change against the true change (oracle exactly 0; gridworld's
numbers unchanged where the truth does not change), and forgetful forgets across its horizon."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.conftest import MAZE_SMALL, compose
from wfeval.benchmarks.memory_maze import memory as maze_memory
from wfeval.functional import memory as F
from wfeval.pipeline import build
from wfeval.storage.artifacts import ArtifactStore, read_array
from wfeval.tasks.memory import revisit_pairs

GAPS = [2, 8, 48]  # look away and back (2, 8), walk out and back (48)


@pytest.fixture(scope="module")
def planned(maze_store):
    cfg = compose([*MAZE_SMALL, "task=memory", f"task.data.memory.gaps=[{','.join(map(str, GAPS))}]"])
    bench = build.build_benchmark(cfg)
    request = bench.materialize((0, 1), store=ArtifactStore(maze_store), task=build.build_task(cfg),
                                protocol=build.build_protocol(cfg))
    return bench, request


def _pose(request, frame):
    info = request.metadata["step_info"]
    return info["x"][frame - 1], info["y"][frame - 1], info["heading"][frame - 1]


def test_every_leg_comes_back_to_its_start_pose_within_the_stated_tolerance(planned):
    _, request = planned
    memory = request.metadata["memory"]
    pairs = [tuple(p) for p in memory["revisits"]]
    assert [j - i for i, j in pairs] == GAPS  # one revisit per leg, its gap the leg's length
    assert pairs == [tuple(loop) for loop in memory["loops"]]
    assert memory["measure"] == "change_vs_truth"
    for i, j in pairs:
        x0, y0, h0 = _pose(request, i)
        x1, y1, h1 = _pose(request, j)
        assert math.hypot(x1 - x0, y1 - y0) <= maze_memory.POSITION_TOLERANCE, (i, j)
        assert abs(math.degrees(math.remainder(h1 - h0, 2 * math.pi))) <= maze_memory.HEADING_TOLERANCE_DEG, (i, j)
    # the walk leaves: somewhere in the long leg the agent is more than a cell away from its start
    i, j = pairs[-1]
    x0, y0, _ = _pose(request, i)
    assert max(math.hypot(_pose(request, t)[0] - x0, _pose(request, t)[1] - y0) for t in range(i + 1, j)) > 1.0
    assert revisit_pairs(memory["places"]) == pairs


def test_the_static_mask_is_the_view_without_the_target_border(planned):
    _, request = planned
    masks = read_array(request.references["static_mask"]).astype(bool)
    video = read_array(request.references["video"])
    assert masks.shape == video.shape[:3] == (len(request.controls["actions"]) + 1, 64, 64)
    b = request.metadata["maze"]["border_px"]
    assert b == 2 and masks[:, b:-b, b:-b].all() and not masks[:, :b].any() and not masks[:, :, -b:].any()


def test_the_true_frames_at_a_revisit_differ_and_the_measure_subtracts_them(planned):
    _, request = planned
    video = read_array(request.references["video"])
    masks = read_array(request.references["static_mask"]).astype(bool)
    pairs = request.metadata["memory"]["revisits"]
    plain = F.revisit_errors(video, pairs, masks)
    assert max(e for _, e in plain) > 0.0  # the ball does not come back exactly: the truth changes
    assert [e for _, e in F.revisit_errors(video, pairs, masks, reference=video)] == [0.0] * len(pairs)
    # a model that redraws the colours at the revisit: the change it shows minus the true change
    forgot = video.copy()
    forgot[-1] = np.clip(forgot[-1].astype(int) + 40, 0, 255).astype(np.uint8)
    i, j = pairs[-1]
    assert F.revisit_errors(forgot, [pairs[-1]], masks, reference=video)[0][1] > 20.0


def test_with_a_truth_that_does_not_change_the_measure_is_the_plain_one():
    rng = np.random.default_rng(0)
    video = rng.integers(0, 256, (6, 32, 32, 3)).astype(np.uint8)
    masks = np.ones((6, 32, 32), bool)
    masks[2, :8, :8] = False
    truth = np.repeat(video[:1], 6, axis=0)  # exact returns: the true frames never change (gridworld)
    pairs = [(0, 2), (0, 5), (1, 4)]
    assert F.revisit_errors(video, pairs, masks, 8, reference=truth) == F.revisit_errors(video, pairs, masks, 8)


class _Logged:
    """The simulator, logging the true pose after every step of the plan."""

    def __init__(self, sim):
        self.sim, self.poses = sim, []

    def restore(self, state):
        self.sim.restore(state)

    def pose(self):
        return self.sim.pose()

    def step(self, action):
        out = self.sim.step(action)
        self.poses.append(self.sim.pose())
        return out


def test_the_long_configs_default_gaps_walk_out_and_come_back_within_the_tolerance(planned):
    """memory_maze_long's own gaps (8 … 256 steps), planned on a 9×9 sample of the session's store (the
    plan needs only a sample's snapshot: the long recording is not made here): every leg is exactly its
    gap long, comes back to its start pose within the tolerance, and the two walks leave by cells."""
    long = compose(["benchmark=memory_maze_long", "task=memory"])
    assert long.task.data.memory.gaps is None  # the task's default: the benchmark's own gaps
    gaps = tuple(long.benchmark.memory_gaps)
    assert gaps == (8, 32, 128, 256)
    bench, request = planned
    sim = _Logged(bench.simulator())
    plan = maze_memory.revisit_plan(sim, request, gaps)
    pairs = revisit_pairs(plan.places)
    assert [j - i for i, j in pairs] == list(gaps) and len(plan.actions) == len(sim.poses)

    def pose(frame):
        return sim.poses[frame - 1]
    for (i, j), gap in zip(pairs, gaps):
        (x0, y0, h0), (x1, y1, h1) = pose(i), pose(j)
        assert math.hypot(x1 - x0, y1 - y0) <= maze_memory.POSITION_TOLERANCE, gap
        assert abs(math.degrees(math.remainder(h1 - h0, 2 * math.pi))) <= maze_memory.HEADING_TOLERANCE_DEG, gap
        away = max(math.hypot(pose(t)[0] - x0, pose(t)[1] - y0) for t in range(i + 1, j))
        assert (away > 2.0) if gap >= maze_memory.WALK_MIN else (away < 0.05), (gap, away)


def test_the_default_gaps_are_the_benchmarks_and_a_users_gaps_win():
    from wfeval.tasks.memory import memory_settings
    from wfeval.config.errors import ConfigError

    assert memory_settings({"gaps": None}, (8, 32, 128, 256)) == (8, 32, 128, 256)
    assert memory_settings({"gaps": [2, 6]}, (8, 32, 128, 256)) == (2, 6)
    with pytest.raises(ConfigError, match="benchmark.memory_gaps must be a non-empty list"):
        memory_settings({"gaps": None}, [0])
    with pytest.raises(ConfigError, match="declares no default gaps"):
        memory_settings({"gaps": None}, None)
    assert list(compose(["benchmark=memory_maze_15x15", "task=memory"]).benchmark.memory_gaps) == [2, 4, 8, 16]


def test_pose_error_on_a_memory_sample_is_measured_at_the_revisits(planned, maze_store):
    """Beside revisit_error: does the frame at each revisit show the place seen before? The oracle's
    frames are exact (0, no render); a model that shows, at the walk's revisit, the view from the far
    end of the walk is cells off there, and only there."""
    from wfeval.api import GenerationResult
    from wfeval.benchmarks.memory_maze.pose import PoseError

    _, request = planned
    video = read_array(request.references["video"])
    pairs = request.metadata["memory"]["revisits"]
    i, j = pairs[-1]
    info = request.metadata["step_info"]
    far = max(range(i + 1, j), key=lambda t: math.hypot(info["x"][t - 1] - info["x"][i - 1],
                                                        info["y"][t - 1] - info["y"][i - 1]))
    wrong = video.copy()
    wrong[j] = video[far]
    metric = PoseError()
    try:
        def score(frames):
            ref = ArtifactStore(maze_store).put_array(frames, kind="video")
            return metric.compute_sample(request, GenerationResult(sample_id=request.sample_id,
                                                                   artifacts={"generated_video": ref}))
        exact = score(video)
        assert exact.raw_value == 0.0 and list(exact.components["frames"]) == [b for _, b in pairs]
        assert list(exact.components["gaps"]) == GAPS and exact.components["renders"] == 0
        shown = score(wrong)
        per_frame = dict(zip(shown.components["frames"], shown.components["per_frame"]))
        assert per_frame[pairs[0][1]] == per_frame[pairs[1][1]] == 0.0 and per_frame[j] > 1.0, per_frame
    finally:
        metric.close()


def test_a_planned_sample_is_kept_and_built_again_without_simulating_and_an_edited_one_is_planned_again(
        maze_store, tmp_path, monkeypatch, caplog):
    """Plans and their true video cost real simulation (minutes on the long config): planned once per
    store, any later run (another model's) builds the same request from the kept index; an index edited
    in the store is refused by its content hash and the sample planned again."""
    from wfeval.tasks.memory import memory_request
    from wfeval.results.document import dataset_hash

    cfg = compose([*MAZE_SMALL])
    bench = build.build_benchmark(cfg)
    store = ArtifactStore(maze_store)
    base = bench.materialize((0, 2), store=store, task=build.build_task(cfg), protocol=build.build_protocol(cfg))
    memory = {"gaps": [2, 4]}
    plain = memory_request(bench, base, store=store, memory=memory)  # no cache: planned as before
    kept = memory_request(bench, base, store=store, memory=memory, cache_root=tmp_path)
    [index] = list(tmp_path.glob("*/*.json"))

    def refuse(*args, **kwargs):
        raise AssertionError("simulated although the sample is kept")

    with monkeypatch.context() as patched:
        patched.setattr(bench, "revisit_plan", refuse)
        patched.setattr(bench, "simulate", refuse)
        again = memory_request(bench, base, store=store, memory=memory, cache_root=tmp_path)
    assert plain.controls["actions"] == kept.controls["actions"] == again.controls["actions"]
    assert plain.metadata == kept.metadata == again.metadata
    assert plain.references == kept.references == again.references
    assert dataset_hash([plain]) == dataset_hash([kept]) == dataset_hash([again])
    # another sample, other gaps or edited planning code are other keys
    assert bench.memory_cache_key(base, [2, 4]) != bench.memory_cache_key(base, [2, 8])

    text = index.read_text()
    index.write_text(text.replace('"actions":[', '"actions":[6,', 1))  # one more step: a different sample
    with caplog.at_level("WARNING"):
        replanned = memory_request(bench, base, store=store, memory=memory, cache_root=tmp_path)
    assert "memory sample refused, planning it again" in caplog.text and "edited or damaged" in caplog.text
    assert replanned.controls["actions"] == plain.controls["actions"]
    assert index.read_text() == text  # written again, as planned

    # sealed again after the edit (its hash recomputed) but not a memory sample: refused all the same
    import json

    from wfeval.benchmarks.base import MEMORY_SAMPLE_FORMAT

    for broken in ({"video": None}, {"static_mask": {"sha256": "../../../etc/passwd", "kind": "array", "shape": [1],
                                                     "dtype": "uint8"}}):
        data = {**json.loads(text), **broken}
        index.write_bytes(store.seal.dumps(f"{MEMORY_SAMPLE_FORMAT}/{index.stem}", data))  # with the store's key
        caplog.clear()
        with caplog.at_level("WARNING"):
            replanned = memory_request(bench, base, store=store, memory=memory, cache_root=tmp_path)
        assert "not a memory sample" in caplog.text, broken
        assert replanned.references == plain.references and index.read_text() == text
