"""`metric=[lpips]` in a run: per-frame curves, the weights recorded, missing weights said plainly.

The runs use test weights (tests/features/_lpips.py: a random backbone in torchvision's layout,
random non-negative heads), passed as files in the config, so they record ``official: false``;
the equality with the reference implementation is tests/metrics/test_lpips_matches_reference.py.
"""

from __future__ import annotations

import dataclasses
import json

import numpy as np
import pytest

from tests.conftest import cli_env, only_run_dir, read_jsonl, run_cli
from tests.features._lpips import lpips_test_overrides, write_test_weights
from wfeval.api import GenerationRequest, GenerationResult
from wfeval.features.lpips_weights import NETS
from wfeval.metrics.perceptual import LPIPS
from wfeval.storage.artifacts import ArtifactStore
from wfeval.storage.metric_rows import metric_identity
from wfeval.utils.hashing import file_sha256

RUN = ["benchmark.num_samples=3", "run.progress=off", "run.report=false"]


@pytest.fixture(scope="module")
def weights_dir(tmp_path_factory):
    return tmp_path_factory.mktemp("lpips-test-weights")


@pytest.fixture(scope="module")
def noisy_run(tmp_path_factory, weights_dir):
    root = tmp_path_factory.mktemp("lpips_run")
    proc = run_cli(["metric=[psnr,lpips]", "model=noisy", f"run.store_dir={root / 'store'}", *RUN,
                    *lpips_test_overrides(weights_dir)], cwd=root, env=cli_env(WFEVAL_CACHE=str(root / "cache")))
    assert proc.returncode == 0, proc.stderr[-3000:]
    run = only_run_dir(root / "outputs" / "runs")
    return proc, run, json.loads((run / "results.json").read_text())


def test_lpips_gives_a_per_frame_curve_and_a_mean_with_its_interval(noisy_run):
    _, run, results = noisy_run
    agg = results["results"]["gridworld.lpips"]
    assert agg["valid"] and agg["n_valid"] == 3 and results["metrics"]["gridworld.lpips"]["higher_is_better"] is False
    rows = [r for r in read_jsonl(run / "metrics.jsonl") if r["metric_id"] == "lpips"]
    for row in rows:
        curve = row["components"]["per_frame"]
        assert len(curve) == 15 and row["components"]["first_frame"] == 1  # the conditioning frame is not compared
        assert row["raw_value"] == pytest.approx(np.mean(curve)) and all(v > 0 for v in curve)
    ci = agg["confidence_interval"]
    assert 0 <= ci["low"] < agg["diagnostics"]["value"] < ci["high"]


def test_the_result_records_the_net_and_both_weights_hashes_and_that_they_are_not_official(noisy_run, weights_dir):
    _, run, results = noisy_run
    backbone, heads = write_test_weights(weights_dir)
    record = results["results"]["gridworld.lpips"]["diagnostics"]["lpips"]
    assert record["net"] == "alex" and record["version"] == "0.1" and record["official"] is False
    assert record["backbone_sha256"] == file_sha256(backbone) and record["heads_sha256"] == file_sha256(heads)
    assert record["backbone_check"].startswith("none: a file named in the config")
    row = next(r for r in read_jsonl(run / "metrics.jsonl") if r["metric_id"] == "lpips")
    assert "net=alex" in row["diagnostics"]["variant"] and "UNOFFICIAL weights" in row["diagnostics"]["variant"]
    assert row["diagnostics"]["weights"]["backbone_sha256"] == record["backbone_sha256"]


def test_without_staged_weights_lpips_says_the_command_and_the_rest_of_the_run_is_unaffected(tmp_path):
    proc = run_cli(["metric=[psnr,lpips]", "model=noisy", f"run.store_dir={tmp_path / 'store'}", *RUN],
                   cwd=tmp_path, env=cli_env(WFEVAL_CACHE=str(tmp_path / "empty-cache")))
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = next(line for line in proc.stdout.splitlines() if line.startswith("gridworld.lpips"))
    assert "n/a" in line and "python -m wfeval.features.fetch lpips --net alex" in line
    results = json.loads((only_run_dir(tmp_path / "outputs" / "runs") / "results.json").read_text())["results"]
    assert results["gridworld.psnr"]["valid"] and results["gridworld.psnr"]["n_valid"] == 3
    lpips = results["gridworld.lpips"]
    assert not lpips["valid"] and lpips["n_skipped"] == 3 and lpips["diagnostics"]["value"] is None
    assert "`python -m wfeval.features.fetch lpips --net alex`" in lpips["diagnostics"]["reason"]
    assert "--from alexnet-owt-7be5be79.pth" in lpips["diagnostics"]["reason"]


def _sample(store, gen, ref):
    request = GenerationRequest(sample_id="s0", references={"video": store.put_array(ref, kind="video")})
    return request, GenerationResult(sample_id="s0", artifacts={"generated_video": store.put_array(gen, kind="video")})


def _metric(weights_dir, net="alex", seed=0, **options):
    backbone, heads = write_test_weights(weights_dir, net, seed)
    return LPIPS(net=net, backbone=str(backbone), heads=str(heads), device="cpu", **options)


def test_vgg_is_an_option_and_is_recorded_as_vgg(tmp_path, weights_dir):
    rng = np.random.default_rng(0)
    ref = rng.integers(0, 256, (4, 32, 40, 3), dtype=np.uint8)
    request, result = _sample(ArtifactStore(tmp_path), np.clip(ref.astype(int) + 9, 0, 255).astype(np.uint8), ref)
    rows = {net: _metric(weights_dir, net).compute_sample(request, result) for net in ("alex", "vgg")}
    assert rows["vgg"].status == rows["alex"].status == "ok"
    assert rows["vgg"].diagnostics["weights"]["net"] == "vgg" and "net=vgg" in rows["vgg"].diagnostics["variant"]
    assert rows["vgg"].raw_value != rows["alex"].raw_value
    agg = _metric(weights_dir, "vgg").aggregate([rows["vgg"]])
    assert agg.diagnostics["lpips"]["net"] == "vgg"


def test_identical_videos_score_zero_and_frames_it_is_not_defined_for_are_skipped(tmp_path, weights_dir):
    store, metric = ArtifactStore(tmp_path), _metric(weights_dir)
    video = np.random.default_rng(1).integers(0, 256, (3, 40, 40, 3), dtype=np.uint8)
    same = metric.compute_sample(*_sample(store, video, video.copy()))
    assert same.status == "ok" and same.raw_value == 0.0 and list(same.components["per_frame"]) == [0.0, 0.0, 0.0]
    gray = metric.compute_sample(*_sample(store, video[..., :1], video[..., :1]))
    assert gray.status == "skip" and "RGB frames (3 channels), got 1" in gray.skip_reason
    tiny = metric.compute_sample(*_sample(store, video[:, :30, :30], video[:, :30, :30]))
    assert tiny.status == "skip" and "at least 31×31" in tiny.skip_reason


def test_rows_of_different_weights_are_never_averaged_together(tmp_path, weights_dir):
    rng = np.random.default_rng(2)
    ref = rng.integers(0, 256, (3, 40, 40, 3), dtype=np.uint8)
    request, result = _sample(ArtifactStore(tmp_path), rng.integers(0, 256, ref.shape, dtype=np.uint8), ref)
    a = _metric(weights_dir, seed=0).compute_sample(request, result)
    b = dataclasses.replace(_metric(weights_dir, seed=1).compute_sample(request, result), sample_id="s1")
    agg = _metric(weights_dir).aggregate([a, b])
    assert not agg.valid and "different LPIPS networks or weights" in agg.diagnostics["reason"]


def test_a_failed_generation_scored_at_the_worst_value_keeps_the_weights_record(tmp_path, weights_dir):
    from wfeval.pipeline.score import score_one

    rng = np.random.default_rng(3)
    ref = rng.integers(0, 256, (3, 40, 40, 3), dtype=np.uint8)
    request, result = _sample(ArtifactStore(tmp_path), rng.integers(0, 256, ref.shape, dtype=np.uint8), ref)
    metric = _metric(weights_dir)
    metric.bounds = (0.0, NETS["alex"].upper_bound)  # as with the official heads, whose bound is declared
    failed = score_one("lpips", metric, dataclasses.replace(request, sample_id="s1"),
                       GenerationResult(sample_id="s1", status="failed", error="boom"), on_failure="worst")
    assert failed.status == "fail" and failed.raw_value == NETS["alex"].upper_bound
    agg = metric.aggregate([metric.compute_sample(request, result), failed])
    assert agg.valid and agg.n_valid == 2 and agg.diagnostics["lpips"]["net"] == "alex"


def test_other_weights_are_another_cache_identity(weights_dir):
    one, other = _metric(weights_dir, seed=0), _metric(weights_dir, seed=1)
    assert metric_identity(one) != metric_identity(other)
    assert metric_identity(one)["config"]["__identity__"]["backbone_sha256"] == file_sha256(write_test_weights(weights_dir)[0])


def test_the_declared_range_is_the_provable_bound_of_the_official_heads():
    """0 ≤ LPIPS ≤ 2·Σ_layers max_c w: unit-normalised non-negative features differ by at most 2 in
    squared norm. The bound is declared with the official heads (whose sha256 is pinned)."""
    assert LPIPS(net="alex", device="cpu").bounds == (0.0, NETS["alex"].upper_bound)
    assert LPIPS(net="vgg", device="cpu").bounds == (0.0, NETS["vgg"].upper_bound)
    assert LPIPS(net="alex", heads="/some/file.pth", device="cpu").bounds == (0.0, None)
    import importlib.util
    from pathlib import Path

    import torch

    spec = importlib.util.find_spec("lpips")  # the real heads ship in the package (not imported: it needs torchvision)
    if spec is None:
        pytest.skip("the lpips package is not installed: pip install --no-deps lpips==0.1.4")
    folder = Path(spec.origin).parent / "weights" / "v0.1"
    for net, files in NETS.items():
        heads = torch.load(folder / f"{net}.pth", map_location="cpu", weights_only=True)
        bound = 2 * sum(float(w.max()) for w in heads.values())
        assert bound <= files.upper_bound < bound + 1e-4 and min(float(w.min()) for w in heads.values()) >= 0


def test_an_unknown_net_is_a_config_error_naming_the_key(tmp_path):
    proc = run_cli(["metric=[lpips]", "metric.lpips.net=squeeze", f"run.store_dir={tmp_path / 'store'}", *RUN],
                   cwd=tmp_path)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert "metric.lpips.net must be one of alex, vgg, got 'squeeze'" in proc.stderr
