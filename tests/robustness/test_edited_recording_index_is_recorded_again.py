"""Issue 32, item 4: a recording index edited in the store (here a Memory Maze snapshot: the oracle
continues from it) is refused by its content hash and the trajectory recorded again — the run says
so in its log and in its events, and the oracle stays exact; the same refusal for an index that is
not JSON or lost its hash. The cache's own check is tested without a simulator."""

from __future__ import annotations

import json

import numpy as np
import pytest

from tests.conftest import MAZE_SMALL, copy_live_store, read_jsonl
from tests.robustness._run import wfeval
from wfeval.storage.recordings import RecordingCache
from wfeval.storage.seal import SEAL, Sealer


def test_an_edited_maze_snapshot_is_recorded_again_and_the_oracle_stays_exact(maze_store, monkeypatch, capsys,
                                                                              tmp_path):
    first = wfeval(monkeypatch, capsys, tmp_path, *MAZE_SMALL, "model=oracle", "run.limit=1", "metric=[psnr]",
                   f"run.store_dir={maze_store}", name="first", samples=None)
    assert first.code == 0 and first.value("memory_maze.psnr") == 100.0
    copy_live_store(maze_store, tmp_path / "store")  # the session's store stays as it is
    edited = []  # the session's store may hold other tests' recordings too: edit every maze snapshot
    for path in sorted((tmp_path / "store" / "recordings" / "memory_maze").rglob("*.json")):
        index = json.loads(path.read_text())
        if not index.get("windows") or "physics" not in (index["windows"][0].get("state") or {}):
            continue
        state = index["windows"][0]["state"]
        state["physics"] = state["physics"][:40] + ("A" if state["physics"][40] != "A" else "B") + state["physics"][41:]
        path.write_text(json.dumps(index))  # the stale content hash stays: an edit, as a user or a bad disk makes it
        edited.append(path)
    assert edited
    again = wfeval(monkeypatch, capsys, tmp_path, *MAZE_SMALL, "model=oracle", "run.limit=1", "metric=[psnr]",
                   name="again", samples=None)
    assert again.code == 0, again.err
    said = again.out + again.err  # the run's log (Hydra's handler writes to stdout)
    refused = [path for path in edited if str(path) in said]  # the one this run reads
    assert "recording index refused" in said and "does not match its hash" in said and len(refused) == 1
    assert again.value("memory_maze.psnr") == 100.0  # the right number, from a fresh recording
    [event] = [e for e in read_jsonl(again.run_dir / "events.jsonl") if e.get("event") == "recording"]
    assert event["trajectories_recorded"] == 1 and len(event["indexes_refused"]) == 1
    rewritten = Sealer(tmp_path / "store").loads(f"wfeval.recording/1/{refused[0].stem}", refused[0].read_bytes(),
                                                 refused[0])  # rewritten sound: sealed with the store's key
    assert rewritten["key"] == refused[0].stem


@pytest.mark.parametrize("damage,reason", [
    (lambda d: {**d, "steps": d["steps"] + 1}, "does not match its hash"),
    (lambda d: {k: v for k, v in d.items() if k != SEAL}, "without a content hash"),
    (None, "unreadable"),
])
def test_the_cache_refuses_an_index_whose_content_is_not_what_it_saved(tmp_path, damage, reason):
    cache = RecordingCache(tmp_path)
    key = "ab" + "0" * 62
    index = {"format": "wfeval.recording/1", "key": key, "steps": 3, "windows": [{"actions": [1, 2]}]}
    path = cache.save(key, index)
    assert cache.load(key) == index and not cache.refused  # sound: served as recorded, without the seal
    text = "{not json" if damage is None else json.dumps(damage(json.loads(path.read_text())))
    path.write_text(text)
    assert cache.load(key) is None and reason in cache.refused[key]


@pytest.mark.parametrize("window,reason", [
    ({"image": {"sha256": "../../../../etc/passwd"}}, "is not the name of a stored object"),
    ({"image": None}, "TypeError"),
    ({}, "KeyError"),
])
def test_an_index_sealed_again_that_is_not_a_recording_is_refused_and_never_reads_outside_the_store(
        tmp_path, window, reason):
    """Resealed after an edit (its hash recomputed), an index whose frames are not object names is refused
    by the reader the recorded benchmark passes, as an edited one is: never a path outside the store."""
    from wfeval.benchmarks.recorded.adapter import _with_frames
    from wfeval.storage.artifacts import ArtifactStore

    store = ArtifactStore(tmp_path / "store")
    cache = RecordingCache(tmp_path / "recordings")
    key = "cd" + "0" * 62
    sound = {k: {"sha256": store.put_array(np.zeros((2, 2), np.uint8), kind="image").sha256}
             for k in ("image", "context", "reference")}
    cache.save(key, {"format": "wfeval.recording/1", "key": key, "windows": [sound]})
    assert cache.load(key, read=lambda index: _with_frames(index, store))["windows"] == [sound]
    cache.save(key, {"format": "wfeval.recording/1", "key": key, "windows": [{**sound, **window}]
                     if window else [window]})
    assert cache.load(key, read=lambda index: _with_frames(index, store)) is None
    assert "not a recording index" in cache.refused[key] and reason in cache.refused[key]


def test_the_store_refuses_an_object_name_that_is_not_a_sha256(tmp_path):
    from wfeval.storage.artifacts import ArtifactStore

    for name in ("../x", "A" * 64, "0" * 63, None):
        with pytest.raises(ValueError, match="not the name of a stored object"):
            ArtifactStore(tmp_path / "store").object_path(name)
