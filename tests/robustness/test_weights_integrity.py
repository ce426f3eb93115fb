"""Weights integrity: the I3D weights are checked against hashes pinned in the code, never against
a file beside them; a mismatch is converted again from the verified source or refused, never used;
results record the sha256 of the bytes that were actually loaded."""

from __future__ import annotations

import hashlib
import io
import json
import pickle
import shutil

import numpy as np
import pytest
import torch

from tests.conftest import cli_env, only_run_dir, run_cli
from tests.features._weights import require_i3d_weights
from wfeval.features import weights as W
from wfeval.features.network import load_network


def _lying_sidecar(path, claimed_sha):
    """What an older wfeval trusted: a JSON beside the file claiming it is the converted checkpoint."""
    path.with_suffix(".json").write_text(json.dumps({"source": W.SOURCE, "source_sha256": W.CKPT_SHA256,
                                                     "sha256": claimed_sha, "converter_version": 1}))


def _random_weights(cache):
    folder = cache / "weights"
    folder.mkdir(parents=True)
    target = folder / W.CONVERTED_NAME
    torch.save({"Conv3d_1a_7x7.conv.weight": torch.randn(64, 3, 7, 7, 7)}, target)
    _lying_sidecar(target, hashlib.sha256(target.read_bytes()).hexdigest())  # the sidecar "matches"
    return target


def test_random_weights_with_a_matching_sidecar_are_refused_with_what_to_do(tmp_path):
    target = _random_weights(tmp_path)
    before = target.read_bytes()
    with pytest.raises(W.WeightsUnavailable) as info:
        W.resolve_weights("auto", tmp_path, fetch=False)
    message = str(info.value)
    assert str(target) in message and W.CONVERTED_SHA256 in message and "not used" in message
    assert "python -m wfeval.features.fetch" in message  # what to do
    assert target.read_bytes() == before  # refused, not silently replaced without a verified source


def test_a_truncated_cached_file_is_refused_not_crashed_on(tmp_path):
    info = require_i3d_weights()
    folder = tmp_path / "weights"
    folder.mkdir()
    (folder / W.CONVERTED_NAME).write_bytes(open(info.path, "rb").read(1 << 20))
    _lying_sidecar(folder / W.CONVERTED_NAME, W.CONVERTED_SHA256)  # even claiming the pinned hash
    with pytest.raises(W.WeightsMismatch, match="not a loadable state dict"):
        W.ensure_ported_weights(tmp_path, fetch=False)


def _tiny_checkpoint(path):
    rng = np.random.default_rng(0)
    tree = {"params": {"Conv3d_1a_7x7": {"Conv_0": {"kernel": rng.standard_normal((2, 2, 2, 3, 4)).astype(np.float32)},
                                         "BatchNorm_0": {"bias": np.zeros(4, np.float32)}}},
            "batch_stats": {"Conv3d_1a_7x7": {"BatchNorm_0": {"mean": np.zeros((1, 1, 1, 1, 4), np.float32),
                                                              "var": np.ones((1, 1, 1, 1, 4), np.float32)}}}}
    path.write_bytes(pickle.dumps(tree, protocol=4))
    return path


def test_mismatched_cached_weights_are_converted_again_from_the_verified_source(tmp_path, monkeypatch):
    """A tiny stand-in checkpoint with its hashes pinned: the same path the real one takes."""
    ckpt = _tiny_checkpoint(tmp_path / "i3d-kinetics-400.ckpt")
    monkeypatch.setattr(W, "CKPT_SHA256", hashlib.sha256(ckpt.read_bytes()).hexdigest())
    expected = W.convert_checkpoint(ckpt, tmp_path / "reference.pt")
    pinned = hashlib.sha256(expected.read_bytes()).hexdigest()
    monkeypatch.setattr(W, "CONVERTED_SHA256", pinned)
    monkeypatch.setattr(W, "CONVERTED_CONTENT_SHA256", W.state_digest(torch.load(expected, weights_only=True)))
    target = _random_weights(tmp_path / "cache")
    stream = io.StringIO()
    info = W.ensure_ported_weights(tmp_path / "cache", source=ckpt, stream=stream)
    assert "not the pinned converted I3D weights" in stream.getvalue() and "converting" in stream.getvalue()
    assert info.sha256 == pinned == hashlib.sha256(target.read_bytes()).hexdigest()


def test_the_conversion_is_deterministic():
    """Pinning the converted file's hash is sound only if converting the same checkpoint twice gives
    the same bytes (it does: torch.save of a fixed state dict); the pinned file is in the cache."""
    ckpt_tree = {"params": {"Conv3d_1a_7x7": {"Conv_0": {"kernel": np.ones((1, 1, 1, 3, 2), np.float32)}}},
                 "batch_stats": {}}
    from wfeval.features.convert import flax_to_state_dict

    blobs = []
    for _ in range(2):
        buffer = io.BytesIO()
        torch.save({k: torch.from_numpy(v) for k, v in flax_to_state_dict(ckpt_tree).items()}, buffer)
        blobs.append(buffer.getvalue())
    assert blobs[0] == blobs[1]
    info = require_i3d_weights()
    assert hashlib.sha256(open(info.path, "rb").read()).hexdigest() == W.CONVERTED_SHA256 == info.sha256


def test_a_file_changed_after_verification_is_not_loaded(tmp_path):
    info = require_i3d_weights()
    copy = tmp_path / W.CONVERTED_NAME
    shutil.copy(info.path, copy)
    verified = W.WeightsInfo("ported", str(copy), W.CONVERTED_SHA256, W.SOURCE, W.CKPT_SHA256)
    with open(copy, "r+b") as handle:
        handle.seek(5000)
        handle.write(b"\xff\xfe")
    with pytest.raises(W.WeightsUnavailable, match="changed since it was verified"):
        load_network(verified, "cpu")


def _fvd_run(tmp_path, cache):
    env = cli_env(WFEVAL_CACHE=str(cache))
    proc = run_cli(["model=static", "metric=[fvd]", "benchmark.num_samples=2", "metric.fvd.fetch=false",
                    "metric.fvd.bootstrap=0", f"metric.fvd.feature_dir={tmp_path / 'features'}",
                    f"run.store_dir={tmp_path / 'store'}", "run.progress=off"], cwd=tmp_path, env=env)
    return proc, json.loads((only_run_dir(tmp_path / "outputs" / "runs") / "results.json").read_text())


def test_results_claim_the_hash_of_the_bytes_loaded_not_a_sidecar(tmp_path):
    info = require_i3d_weights()
    cache = tmp_path / "cache"
    (cache / "weights").mkdir(parents=True)
    shutil.copy(info.path, cache / "weights" / W.CONVERTED_NAME)
    _lying_sidecar(cache / "weights" / W.CONVERTED_NAME, "0" * 64)
    proc, document = _fvd_run(tmp_path, cache)
    assert proc.returncode == 0 and "Traceback" not in proc.stderr, proc.stderr[-2000:]
    weights = document["results"]["gridworld.fvd"]["diagnostics"]["weights"]
    loaded = hashlib.sha256((cache / "weights" / W.CONVERTED_NAME).read_bytes()).hexdigest()
    assert weights["sha256"] == loaded == W.CONVERTED_SHA256


def test_a_run_with_random_cached_weights_reports_no_fvd_and_claims_no_hash(tmp_path):
    _random_weights(tmp_path / "cache")
    proc, document = _fvd_run(tmp_path, tmp_path / "cache")
    assert "Traceback" not in proc.stderr
    fvd = document["results"]["gridworld.fvd"]
    assert fvd["valid"] is False and fvd["n_valid"] == 0
    assert "weights" not in fvd["diagnostics"]  # nothing claims any weights, let alone the official ones
    rows = [json.loads(line) for line in (only_run_dir(tmp_path / "outputs" / "runs") / "metrics.jsonl").open()]
    assert len(rows) == 2 and not any(r["valid"] or "weights_sha256" in r["diagnostics"] for r in rows)
    assert all("not the pinned converted I3D weights" in r["skip_reason"] for r in rows)  # the reason, per sample


def test_fetch_check_reports_a_mismatched_cache_and_fails(tmp_path, capsys):
    from wfeval.cli.fetch import main as fetch_main

    _random_weights(tmp_path)
    assert fetch_main(["--cache-dir", str(tmp_path), "--check"]) == 1
    err = capsys.readouterr().err
    assert "not the pinned converted I3D weights" in err and "Traceback" not in err
