"""Issue 32, items 3 and 8: ``pose_error`` gives its maximum (the maze's diagonal) for a frame that
matches no render well enough — noise, a black or a flat grey frame — while a frozen (``static``)
frame, a right-pose frame with noise and the oracle's frame keep their measured distance; a run
with ``pose_error`` ends without an OpenGL traceback on stderr."""

from __future__ import annotations

import math

import numpy as np
import pytest

from tests.conftest import MAZE_SMALL, cli_env, compose, run_cli
from wfeval.api import GenerationResult
from wfeval.benchmarks.memory_maze.pose import MAX_MATCH_MSE, PoseError
from wfeval.pipeline import build
from wfeval.storage.artifacts import ArtifactStore, read_array


@pytest.fixture(scope="module")
def sample(maze_store):
    cfg = compose([*MAZE_SMALL])
    bench = build.build_benchmark(cfg)
    store = ArtifactStore(maze_store)
    requests = bench.requests(store=store, task=build.build_task(cfg), protocol=build.build_protocol(cfg))
    return store, requests[0]


def _score(store, request, video):
    metric = PoseError(stride=16)
    try:
        result = GenerationResult(sample_id=request.sample_id,
                                  artifacts={"generated_video": store.put_array(video, kind="video")})
        return metric.compute_sample(request, result)
    finally:
        metric.close()


def test_frames_that_show_no_maze_score_the_maximum_and_a_frozen_frame_its_distance(sample):
    store, request = sample
    reference = read_array(request.references["video"])
    rng = np.random.default_rng(0)
    worst = math.hypot(9, 9)  # the 9×9 maze's diagonal, cells
    videos = {
        "noise": rng.integers(0, 256, reference.shape, dtype=np.uint8),
        "black": np.zeros_like(reference),
        "grey": np.full_like(reference, 128),
        "static": np.repeat(reference[:1], len(reference), axis=0),
        "noisy": np.clip(reference + rng.normal(0, 10, reference.shape), 0, 255).astype(np.uint8),
        "oracle": reference,
    }
    out = {name: _score(store, request, video) for name, video in videos.items()}
    for name in ("noise", "black", "grey"):
        row = out[name]
        assert row.raw_value == pytest.approx(worst), (name, row)
        assert list(row.components["unmatched_frames"]) == list(row.components["frames"])
        assert min(row.components["match_mse"]) > MAX_MATCH_MSE
        assert "match no render" in row.diagnostics["note"]
    # a real view of the maze is matched: static shows the start pose, its distance from the commanded one
    assert not out["static"].components["unmatched_frames"]
    assert 0.5 < out["static"].raw_value < 5.0
    assert not out["noisy"].components["unmatched_frames"] and out["noisy"].raw_value < 0.05
    assert out["oracle"].raw_value == 0.0
    # what the threshold separates: a real frame's match is far below it, a frame of no maze far above
    assert max(out["noisy"].components["match_mse"]) < MAX_MATCH_MSE / 4
    assert max(out["static"].components["match_mse"]) < 5.0


def test_a_threshold_outside_the_mse_range_is_refused():
    for bad in (0, -1.0, 70000, True, "x"):
        with pytest.raises(ValueError, match="max_match_mse"):
            PoseError(max_match_mse=bad)


def test_a_run_with_pose_error_ends_without_an_opengl_traceback(maze_store, tmp_path):
    proc = run_cli([*MAZE_SMALL, "model=static", "run.limit=1", "metric=[pose_error]", "metric.pose_error.stride=16",
                    f"run.store_dir={maze_store}", f"hydra.run.dir={tmp_path / 'run'}"], cwd=tmp_path, env=cli_env())
    assert proc.returncode == 0, proc.stderr
    assert "Traceback" not in proc.stderr and "EGL_BAD_ACCESS" not in proc.stderr, proc.stderr
    assert "pose_error" in proc.stdout


def test_the_default_threshold_is_the_documented_constant():
    """The option's default is a literal (the schema cache keys on the sources): it must stay MAX_MATCH_MSE."""
    assert PoseError().max_match_mse == MAX_MATCH_MSE == 650.25
