"""Concurrent jobs can share one artifact store: no torn files, identical results."""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys

import pytest
import zstandard

from tests.conftest import cli_env, only_run_dir

pytestmark = pytest.mark.subprocess  # two processes writing into one store


def test_two_processes_generating_into_one_store_leave_it_consistent(tmp_path):
    store = tmp_path / "store"
    procs = []
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        procs.append(subprocess.Popen(
            [sys.executable, "-m", "wfeval", f"run.store_dir={store}", "benchmark.num_samples=24", "run.batch_size=1",
             "run.progress=off"], cwd=tmp_path / name, env=cli_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE))
    for proc in procs:
        _, err = proc.communicate(timeout=300)
        assert proc.returncode == 0, err.decode()
    results = [json.loads((only_run_dir(tmp_path / n / "outputs" / "runs") / "results.json").read_text())["results"]
               for n in ("a", "b")]
    assert results[0] == results[1]
    assert not list(store.rglob("*.tmp"))
    objects = list((store / "objects").rglob("*.npy.zst"))
    # per sample: the initial frame and the reference video; the oracle's generation is
    # byte-identical to the reference, so content addressing stores it once for both
    assert len(objects) == 24 * 2
    for path in objects:
        address = path.name.removesuffix(".npy.zst")  # the sha256 of the decoded .npy bytes
        assert hashlib.sha256(zstandard.ZstdDecompressor().decompress(path.read_bytes())).hexdigest() == address
    for entry in (store / "generations").rglob("*.json"):
        assert json.loads(entry.read_text())["status"] == "ok"
