"""model=precomputed: a folder of already generated videos matched by sample id, in any format."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.benchmarks._folder_helpers import EXAMPLE, lines
from tests.conftest import compose, only_run_dir, read_jsonl, run_cli
from wfeval.config.errors import ConfigError
from wfeval.io import read_video, write_image, write_video
from wfeval.pipeline.runner import run_from_config


def _references(n: int = 4) -> dict[str, np.ndarray]:
    return {row["sample_id"]: read_video(EXAMPLE / row["reference_video"]).frames for row in lines(EXAMPLE)[:n]}


def _run(tmp_path, store, root, *overrides, name="run"):
    cfg = compose(["benchmark=folder", f"benchmark.dataset_root={EXAMPLE}", "model=precomputed",
                   f"model.root={root}", f"run.store_dir={store}", "run.progress=off",
                   "metric=[generated_rate,psnr]", *overrides])
    return run_from_config(cfg, output_dir=tmp_path / name)


def _results(tmp_path, name="run") -> dict:
    return {r["request"]["sample_id"]: r["result"] for r in read_jsonl(tmp_path / name / "generations.jsonl")}


def test_any_format_missing_is_not_generated_corrupt_is_a_failure_naming_the_file(tmp_path, store):
    refs = _references()
    ids = list(refs)
    root = tmp_path / "videos"
    write_video(root / f"{ids[0]}.mkv", refs[ids[0]], fps=8)
    for i, frame in enumerate(refs[ids[1]]):  # a folder of PNG frames
        write_image(root / ids[1] / f"{i:03d}.png", frame)
    data = write_video(root / f"{ids[2]}.mp4", refs[ids[2]], fps=8).read_bytes()
    (root / f"{ids[2]}.mp4").write_bytes(data[: len(data) // 2])  # truncated
    summary = _run(tmp_path, store, root)  # ids[3] has no file
    results = _results(tmp_path)
    assert results[ids[0]]["status"] == "ok" and results[ids[0]]["metadata"]["source"] == f"{ids[0]}.mkv"
    assert results[ids[1]]["status"] == "ok" and results[ids[1]]["metadata"]["source"] == ids[1]
    assert results[ids[2]]["status"] == "failed"
    assert results[ids[2]]["error"].startswith(f"VideoReadError: {root / ids[2]}.mp4: ")
    assert results[ids[3]]["status"] == "not_generated" and "no file for sample" in results[ids[3]]["error"]
    psnr = summary.results["gridworld_tiny.psnr"]
    assert (psnr.n_valid, psnr.normalized_stats["mean"]) == (2, 100.0)  # lossless: identical (capped)
    rate = summary.results["gridworld_tiny.generated_rate"]
    assert (rate.n_valid, rate.normalized_stats["ratio"]) == (4, 0.5)  # not generated counts against the model
    assert rate.n_skipped == 0 and psnr.n_skipped == 2  # ... never as an error of a metric


def test_a_changed_folder_is_not_served_from_the_cache(tmp_path, store):
    refs = _references(2)
    ids = list(refs)
    root = tmp_path / "videos"
    root.mkdir()
    for sample_id, video in refs.items():
        np.save(root / f"{sample_id}.npy", video)
    first = _run(tmp_path, store, root, "benchmark.subset=[gridworld-test-00000,gridworld-test-00001]")
    again = _run(tmp_path, store, root, "benchmark.subset=[gridworld-test-00000,gridworld-test-00001]", name="again")
    assert (first.generated, again.generated, again.cached) == (2, 0, 2)
    np.save(root / f"{ids[0]}.npy", 255 - refs[ids[0]])  # same name, new content
    changed = _run(tmp_path, store, root, "benchmark.subset=[gridworld-test-00000,gridworld-test-00001]",
                   name="changed")
    assert (changed.generated, changed.cached) == (2, 0)
    assert changed.results["gridworld_tiny.psnr"].normalized_stats["mean"] < 100
    keys = {json.loads((tmp_path / n / "manifest.json").read_text())["model"]["key"] for n in ("run", "changed")}
    assert len(keys) == 2


def test_templates_formats_and_ambiguity(tmp_path, store):
    refs = _references(2)
    ids = list(refs)
    root = tmp_path / "videos"
    write_video(root / "test" / f"{ids[0]}.mkv", refs[ids[0]], fps=8)
    write_video(root / "test" / f"{ids[1]}.mkv", refs[ids[1]], fps=8)
    np.save(root / "test" / f"{ids[1]}.npy", refs[ids[1]])
    _run(tmp_path, store, root, "model.path_template='{split}/{sample_id}'")
    results = _results(tmp_path)
    assert results[ids[0]]["status"] == "ok"
    assert results[ids[1]]["status"] == "failed" and "several files" in results[ids[1]]["error"]
    _run(tmp_path, store, root, "model.path_template='{split}/{sample_id}'", "model.formats=[npy]", name="npy")
    results = _results(tmp_path, "npy")
    assert results[ids[1]]["status"] == "ok" and results[ids[0]]["status"] == "not_generated"
    with pytest.raises(ConfigError, match="path_template"):
        _run(tmp_path, store, root, "model.path_template='{sample}'", name="bad")


def test_from_the_command_line_on_the_example_dataset(tmp_path):
    root = tmp_path / "videos"
    for sample_id, video in _references().items():
        write_video(root / f"{sample_id}.mp4", video, fps=8)
    proc = run_cli(["benchmark=folder", f"benchmark.dataset_root={EXAMPLE}", "model=precomputed",
                    f"model.root={root}", "run.progress=off", f"run.store_dir={tmp_path / 'store'}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert "precomputed on gridworld_tiny" in proc.stdout
    results = json.loads((only_run_dir(tmp_path / "outputs" / "runs") / "results.json").read_text())["results"]
    assert results["gridworld_tiny.generated_rate"]["normalized_stats"]["ratio"] == 1.0
    assert results["gridworld_tiny.psnr"]["normalized_stats"]["mean"] > 30  # h264 is close, not exact
