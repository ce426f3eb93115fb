"""The arena as a real server on 127.0.0.1: killed with ``kill -9`` while votes are being cast and
restarted, every vote it said was committed is in SQLite; a bounded load test of concurrent voters
loses no vote."""

from __future__ import annotations

import os
import signal
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.arena import server
from wfeval.storage.votes import read_votes

pytest.importorskip("uvicorn")


@pytest.mark.subprocess  # the arena's server killed with SIGKILL
def test_kill_9_during_voting_loses_no_committed_vote(arena_sweep):
    port = server.free_port()
    base = f"http://127.0.0.1:{port}"
    proc = server.start(arena_sweep, port)
    committed: list[str] = []
    stop = threading.Event()

    def voter(rater: str) -> None:
        token = server.session(base)
        while not stop.is_set():
            try:
                vote_id = server.cast(base, token, rater)
            except OSError:
                return  # the server is gone
            if vote_id is None:
                return
            committed.append(vote_id)

    threads = [threading.Thread(target=voter, args=(f"r{i}",)) for i in range(3)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + 60
    while len(committed) < 12 and time.monotonic() < deadline:
        time.sleep(0.02)
    os.kill(proc.pid, signal.SIGKILL)  # in the middle of voting
    proc.wait(timeout=10)
    stop.set()
    for t in threads:
        t.join(timeout=30)
    assert len(committed) >= 12
    proc = server.start(arena_sweep, port)  # restarted on the same votes file
    try:
        stored = {v.vote_id for v in read_votes(arena_sweep / "arena.sqlite")}
        assert set(committed) <= stored
        assert len(stored) - len(committed) <= 3  # at most the vote in flight of each voter
        token = server.session(base)
        assert server.cast(base, token, "r0") is not None  # voting goes on after the restart
    finally:
        proc.kill()
        proc.wait(timeout=10)


@pytest.mark.subprocess  # the arena's server as its own process
def test_concurrent_voters_lose_no_vote(arena_sweep):
    port = server.free_port()
    base = f"http://127.0.0.1:{port}"
    proc = server.start(arena_sweep, port)
    voters, each = 6, 10  # bounded: 60 votes, 6 at a time
    try:
        def run(i: int) -> list[str]:
            token = server.session(base)
            return [server.cast(base, token, f"load{i}", "a" if k % 2 else "b") for k in range(each)]

        started = time.monotonic()
        with ThreadPoolExecutor(voters) as pool:
            ids = [v for batch in pool.map(run, range(voters)) for v in batch]
        elapsed = time.monotonic() - started
        assert None not in ids and len(set(ids)) == voters * each
        assert {v.vote_id for v in read_votes(arena_sweep / "arena.sqlite")} == set(ids)
        assert elapsed < 120
    finally:
        proc.kill()
        proc.wait(timeout=10)
