"""Issue 32, item 4: a recording index edited in the store (here a Memory Maze snapshot: the oracle
continues from it) is refused by its content hash and the trajectory recorded again — the run says
so in its log and in its events, and the oracle stays exact; the same refusal for an index that is
not JSON or lost its hash. The cache's own check is tested without a simulator."""

from __future__ import annotations

import json
import shutil

import pytest

from tests.conftest import MAZE_SMALL, read_jsonl
from tests.robustness._run import wfeval
from wfeval.storage.recordings import CHECK, RecordingCache, content_sha256


def _index(store, family):
    [path] = (store / "recordings" / family).rglob("*.json")
    return path


def test_an_edited_maze_snapshot_is_recorded_again_and_the_oracle_stays_exact(maze_store, monkeypatch, capsys,
                                                                              tmp_path):
    first = wfeval(monkeypatch, capsys, tmp_path, *MAZE_SMALL, "model=oracle", "run.limit=1", "metric=[psnr]",
                   f"run.store_dir={maze_store}", name="first", samples=None)
    assert first.code == 0 and first.value("memory_maze.psnr") == 100.0
    shutil.copytree(maze_store, tmp_path / "store")  # the session's store stays as it is
    path = _index(tmp_path / "store", "memory_maze")
    index = json.loads(path.read_text())
    state = index["windows"][0]["state"]
    state["physics"] = state["physics"][:40] + ("A" if state["physics"][40] != "A" else "B") + state["physics"][41:]
    path.write_text(json.dumps(index))  # the stale content hash stays: an edit, as a user or a bad disk makes it
    again = wfeval(monkeypatch, capsys, tmp_path, *MAZE_SMALL, "model=oracle", "run.limit=1", "metric=[psnr]",
                   name="again", samples=None)
    assert again.code == 0, again.err
    said = again.out + again.err  # the run's log (Hydra's handler writes to stdout)
    assert "recording index refused" in said and "does not match its hash" in said and str(path) in said
    assert again.value("memory_maze.psnr") == 100.0  # the right number, from a fresh recording
    [event] = [e for e in read_jsonl(again.run_dir / "events.jsonl") if e.get("event") == "recording"]
    assert event["trajectories_recorded"] == 1 and len(event["indexes_refused"]) == 1
    assert json.loads(path.read_text())[CHECK] == content_sha256(json.loads(path.read_text()))  # rewritten sound


@pytest.mark.parametrize("damage,reason", [
    (lambda d: {**d, "steps": d["steps"] + 1}, "does not match its hash"),
    (lambda d: {k: v for k, v in d.items() if k != CHECK}, "without a content hash"),
    (None, "unreadable"),
])
def test_the_cache_refuses_an_index_whose_content_is_not_what_it_saved(tmp_path, damage, reason):
    cache = RecordingCache(tmp_path)
    key = "ab" + "0" * 62
    index = {"format": "wfeval.recording/1", "key": key, "steps": 3, "windows": [{"actions": [1, 2]}]}
    path = cache.save(key, index)
    assert cache.load(key) == index and not cache.refused  # sound: served as recorded, without the hash
    text = "{not json" if damage is None else json.dumps(damage(json.loads(path.read_text())))
    path.write_text(text)
    assert cache.load(key) is None and reason in cache.refused[key]
