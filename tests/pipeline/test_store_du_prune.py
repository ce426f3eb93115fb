"""``python -m wfeval.store``: sizes of the store, pruning by age or size that never touches an
object a kept run references."""

from __future__ import annotations

import io
import os
import time

import numpy as np
import pytest

from tests.conftest import cli_env, compose, run_python
from wfeval.storage.artifacts import ArtifactStore, read_array
from wfeval.storage.usage import du, kept_references, objects, parse_age, parse_size, prune


@pytest.fixture()
def two_runs(tmp_path):
    """A kept run (under runs/) and a deleted one (its objects are then unreferenced)."""
    from wfeval.pipeline.runner import run_from_config

    store = tmp_path / "store"
    common = [f"run.store_dir={store}", "run.progress=off", "benchmark.num_samples=2", "metric=[generated_rate]"]
    run_from_config(compose([*common, "model=static"]), output_dir=tmp_path / "runs" / "kept")
    run_from_config(compose([*common, "model=random_actions"]), output_dir=tmp_path / "gone")
    extra = ArtifactStore(store).put_array(np.arange(10, dtype=np.uint8), kind="array")  # referenced by nobody
    return store, tmp_path / "runs", extra


def test_du_reports_objects_codecs_and_what_kept_runs_reference(two_runs):
    store, runs, _ = two_runs
    out = io.StringIO()
    report = du(store, [runs], out=out)
    kept = kept_references([runs])
    assert len(kept.runs) == 1 and report["kept_runs"] == 1
    all_objects = list(objects(store))
    assert report["objects"] == len(all_objects) and set(report["by_codec"]) == {"zstd"}
    assert 0 < report["referenced_objects"] < report["objects"]
    assert report["decoded_bytes"] > 5 * report["bytes"]  # gridworld compresses far beyond 2x
    assert report["generations"]["files"] == 4  # 2 samples x 2 models
    assert "kept runs" in out.getvalue() and "zstd" in out.getvalue()


def test_prune_by_size_keeps_what_the_kept_run_references_and_drops_stale_records(two_runs):
    store, runs, extra = two_runs
    kept = kept_references([runs]).shas
    before = {o.sha256 for o in objects(store)}
    assert prune(store, [runs], older_than=None, max_size=0, dry_run=True, out=io.StringIO())["removed"] > 0
    assert {o.sha256 for o in objects(store)} == before  # a dry run removes nothing
    result = prune(store, [runs], older_than=None, max_size=0, out=io.StringIO())
    after = {o.sha256 for o in objects(store)}
    assert after == before & kept and extra.sha256 not in after
    assert result["records_removed"] == 2  # the deleted run's generation records named removed objects
    for sha in kept:  # every object the kept run needs still reads back
        read_array(ArtifactStore(store).ref_of(sha, kind="x", shape=(), dtype="uint8"))


def test_prune_by_age_removes_only_old_unreferenced_objects(two_runs):
    store, runs, extra = two_runs
    old = time.time() - 40 * 86400
    for obj in objects(store):
        os.utime(obj.path, (old, old))
    fresh = ArtifactStore(store).put_array(np.ones(3, np.uint8), kind="array")  # written now
    prune(store, [runs], older_than=parse_age("30d"), max_size=None, out=io.StringIO())
    left = {o.sha256 for o in objects(store)}
    assert fresh.sha256 in left and extra.sha256 not in left
    assert kept_references([runs]).shas <= left


def test_reuse_refreshes_an_objects_age(tmp_path):
    store = ArtifactStore(tmp_path)
    ref = store.put_array(np.zeros(4, np.uint8), kind="array")
    os.utime(ref.uri, (1, 1))
    store.put_array(np.zeros(4, np.uint8), kind="array")
    assert os.stat(ref.uri).st_mtime > 1e9


def test_sizes_and_ages_parse_and_the_command_line_answers(two_runs):
    assert parse_size("1.5K") == 1536 and parse_size("20G") == 20 << 30 and parse_age("12h") == 43200
    store, runs, _ = two_runs
    ok = run_python(["-m", "wfeval.store", "--store", str(store), "--runs", str(runs), "du"], env=cli_env())
    assert ok.returncode == 0 and "objects" in ok.stdout
    bad = run_python(["-m", "wfeval.store", "--store", str(store / "nope"), "du"], env=cli_env())
    assert bad.returncode == 2 and "not a store folder" in bad.stderr
    none = run_python(["-m", "wfeval.store", "--store", str(store), "prune"], env=cli_env())
    assert none.returncode == 2 and "--older-than" in none.stderr
