"""The dataset folder family reads the shipped example into the same requests as the built-in world."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.benchmarks._folder_helpers import EXAMPLE, copy_example, lines, write_lines
from tests.conftest import compose
from wfeval.benchmarks.base import INPUT_ERROR, BenchmarkAdapter, BenchmarkRuntimeHook, BenchmarkScorer, input_error
from wfeval.config.errors import ConfigError
from wfeval.io import write_video
from wfeval.pipeline import build
from wfeval.pipeline.select import select_requests
from wfeval.storage.artifacts import ArtifactStore, read_array


def _bench_and_requests(tmp_path, *overrides):
    cfg = compose(list(overrides))
    bench = build.build_benchmark(cfg)
    requests = select_requests(bench, store=ArtifactStore(tmp_path / "store"), task=build.build_task(cfg),
                                     protocol=build.build_protocol(cfg), limit=cfg.run.limit, shard=None)
    return bench, requests


def _folder(tmp_path, root=EXAMPLE, *overrides):
    return _bench_and_requests(tmp_path, "benchmark=folder", f"benchmark.dataset_root={root}", *overrides)


def _comparable(request):
    data = request.to_dict()
    for field in ("inputs", "references"):
        data[field] = {k: v["sha256"] for k, v in data[field].items()}
    data.pop("benchmark_id")
    return data


def test_the_example_is_the_built_in_world_exported_same_requests(tmp_path):
    _, world = _bench_and_requests(tmp_path, "benchmark.num_samples=4")
    bench, folder = _folder(tmp_path)
    assert [_comparable(r) for r in folder] == [_comparable(r) for r in world]
    assert bench.spec.benchmark_id == "gridworld_tiny" and bench.spec.splits == ("test",)
    assert isinstance(bench, BenchmarkAdapter) and isinstance(bench.runtime, BenchmarkRuntimeHook)
    assert isinstance(bench.scorer, BenchmarkScorer)
    video = read_array(folder[0].references["video"])
    assert video.shape == (16, 64, 64, 3) and folder[0].generation["num_frames"] == 16
    assert list(folder[0].controls["action_names"]) == ["noop", "up", "down", "left", "right"]
    assert bench.problems == [] and bench.fingerprint()["manifest_sha256"]


def test_split_and_subset_filters(tmp_path):
    root = copy_example(tmp_path / "data")
    rows = lines(root)
    rows[1]["split"] = rows[3]["split"] = "val"
    write_lines(root, rows)
    _, val = _folder(tmp_path, root, "benchmark.split=val")
    assert [r.sample_id for r in val] == [rows[1]["sample_id"], rows[3]["sample_id"]]
    _, some = _folder(tmp_path, root, "benchmark.subset=['gridworld-test-0000[02]']")
    assert [r.sample_id for r in some] == ["gridworld-test-00000", "gridworld-test-00002"]
    with pytest.raises(ConfigError, match="'train' selects no sample.*its splits: test, val"):
        _folder(tmp_path, root, "benchmark.split=train")
    with pytest.raises(ConfigError, match="benchmark.subset: no sample 'nope'"):
        _folder(tmp_path, root, "benchmark.subset=[nope]")


def test_minimal_hand_written_dataset_with_only_reference_videos(tmp_path):
    root = tmp_path / "mine"
    video = np.random.default_rng(0).integers(0, 256, (6, 24, 32, 3), dtype=np.uint8)
    write_video(root / "clips" / "a.mp4", video, fps=10)
    write_video(root / "clips" / "b.npz", video[:4], fps=10)
    write_lines(root, [{"sample_id": "a", "reference_video": "clips/a.mp4", "actions": [1, 2, 3, 4, 0]},
                       {"sample_id": "b", "reference_video": "clips/b.npz", "prompt": "a cat",
                        "metadata": {"scene": "kitchen"}, "fps": 5}])
    bench, (a, b) = _folder(tmp_path, root)
    assert bench.spec.benchmark_id == "mine" and a.split == "default"
    np.testing.assert_array_equal(read_array(b.inputs["image"]), video[0])  # first frame of the reference
    assert a.generation["num_frames"] == 6 and b.generation["num_frames"] == 4 and b.generation["fps"] == 5
    assert "actions" not in b.controls and b.prompt == "a cat" and b.metadata == {"scene": "kitchen"}


def test_strict_refuses_the_whole_dataset_listing_every_problem(tmp_path):
    root = copy_example(tmp_path / "data")
    rows = lines(root)
    write_lines(root, [*rows, {**rows[0], "refernce_video": "x.mkv", "sample_id": "new"}])
    with pytest.raises(ConfigError) as info:
        _folder(tmp_path, root, "benchmark.strict=true")
    assert "manifest.jsonl:5: unknown key 'refernce_video' (did you mean: reference_video" in str(info.value)


def test_missing_root_or_manifest_is_a_config_error(tmp_path):
    with pytest.raises(ConfigError, match="is not a folder"):
        _folder(tmp_path, tmp_path / "nowhere")
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="has no manifest.jsonl"):
        _folder(tmp_path, tmp_path / "empty")


def test_dataset_json_errors_refuse_the_dataset(tmp_path):
    root = copy_example(tmp_path / "data")
    info = json.loads((root / "dataset.json").read_text())
    (root / "dataset.json").write_text(json.dumps({**info, "fps": -1, "colour": "red"}))
    with pytest.raises(ConfigError, match=r"unknown key 'colour'.*fps must be a positive number"):
        _folder(tmp_path, root)


def test_reserved_metadata_key_and_escaping_paths_refuse_the_line(tmp_path):
    root = copy_example(tmp_path / "data")
    rows = lines(root)
    write_lines(root, [*rows, {**rows[0], "sample_id": "x", "metadata": {INPUT_ERROR: "no"}},
                       {**rows[0], "sample_id": "y", "reference_video": "../../etc/passwd"},
                       {**rows[0], "sample_id": "z", "initial_frame": "/abs/frame.png"}])
    bench, requests = _folder(tmp_path, root)
    # each refused line is still a sample (it counts against coverage), never sent to a model
    assert len(requests) == 7 and [r.sample_id for r in requests if input_error(r)] == ["x", "y", "z"]
    text = bench.report()
    assert "manifest.jsonl:5: metadata must be an object without the reserved key 'input_error'" in text
    assert "manifest.jsonl:6: reference_video: '../../etc/passwd' contains '..'" in text
    assert "manifest.jsonl:7: initial_frame: '/abs/frame.png' is absolute" in text


def test_a_folder_benchmark_without_dataset_root_says_which_key_to_set(tmp_path):
    with pytest.raises(ConfigError, match=r"benchmark.dataset_root: required, not set; give it on the command line"):
        _bench_and_requests(tmp_path, "benchmark=folder")
