"""The arena's web app in process (Starlette's TestClient): blind pairs, votes committed to SQLite,
which pair next, and safety: nothing outside the given runs served, votes only as POSTs with the
session's token, text escaped, a malformed or replayed vote refused with a 4xx changing nothing."""

from __future__ import annotations

import json
import re

import pytest

pytest.importorskip("starlette")
pytest.importorskip("httpx")

from starlette.testclient import TestClient  # noqa: E402

from wfeval.arena.app import build_app  # noqa: E402
from wfeval.arena.core import Arena  # noqa: E402
from wfeval.arena.pool import Pool  # noqa: E402
from wfeval.storage.votes import VoteStore, read_votes  # noqa: E402


@pytest.fixture
def served(arena_sweep):
    store = VoteStore(arena_sweep / "arena.sqlite")
    arena = Arena(Pool([arena_sweep]), store, seed=0)
    with TestClient(build_app(arena)) as client:
        yield arena, client
    store.close()


def _token(client) -> str:
    page = client.get("/")
    assert page.status_code == 200
    return re.search(r'name="arena-token" content="([^"]+)"', page.text).group(1)


def _pair(client, token, rater="ann"):
    r = client.get("/api/next", params={"session": token, "rater": rater})
    assert r.status_code == 200, r.text
    return r.json()["pair"]


def test_a_pair_shows_the_same_sample_from_two_models_with_names_hidden(served):
    arena, client = served
    token = _token(client)
    pair = _pair(client, token)
    text = json.dumps(pair)
    for name in ("oracle", "noisy", "static"):
        assert name not in text  # blind: no model name, no run folder
    for side in ("left", "right", "reference"):
        picture = client.get(pair[side]["url"])
        assert picture.status_code == 200 and picture.headers["content-type"] == "image/webp"
        assert picture.content[:4] == b"RIFF" and pair[side]["frames"] == 16
    issued = arena.issued(pair["id"])
    assert issued.left != issued.right and issued.candidate.sample_id == pair["sample"]


def test_a_vote_is_committed_with_the_runs_the_sample_and_the_videos_seen(served, arena_sweep):
    arena, client = served
    token = _token(client)
    pair = _pair(client, token)
    issued = arena.issued(pair["id"])
    r = client.post("/api/vote", json={"session": token, "pair_id": pair["id"], "choice": "a"})
    assert r.status_code == 200 and r.json()["votes"] == 1
    [vote] = read_votes(arena_sweep / "arena.sqlite")  # read by another connection: committed
    assert (vote.run_id_a, vote.run_id_b, vote.sample_id, vote.choice, vote.rater) == (
        issued.left, issued.right, pair["sample"], "a", "ann")
    assert vote.video_a == arena.pool.shown[issued.left][pair["sample"]].generated["sha256"]
    assert {vote.model_a, vote.model_b} <= {"oracle", "noisy", "static"}


def test_every_model_pair_and_sample_is_covered_before_any_repeats_and_no_rater_sees_a_pair_twice(served):
    arena, client = served
    token = _token(client)
    seen, pairs_first3 = [], set()
    for i in range(30):  # 10 samples x 3 model pairs: all of them, then none left
        pair = _pair(client, token)
        issued = arena.issued(pair["id"])
        key = (pair["sample"], frozenset((issued.left, issued.right)))
        assert key not in seen
        seen.append(key)
        if i < 3:
            pairs_first3.add(key[1])
        assert client.post("/api/vote", json={"session": token, "pair_id": pair["id"], "choice": "tie"}).status_code == 200
    assert len(pairs_first3) == 3  # the three model pairs come first
    assert len({s for s, _ in seen[:10]}) >= 4
    assert _pair(client, token) is None  # ann has judged every pair
    assert _pair(client, _token(client), rater="bob") is None  # so has this browser, under any name
    client.cookies.clear()  # another browser
    assert _pair(client, _token(client), rater="bob") is not None


@pytest.mark.parametrize("path", ["/media/../../etc/passwd", "/media/..%2F..%2Fetc%2Fpasswd/left.webp",
                                  "/media/x/..%2F..%2F..%2Fetc%2Fpasswd", "/..%2f..%2fetc/passwd", "/static/../x",
                                  "/media/%2e%2e/%2e%2e/left.webp", "/arena.sqlite", "/0_oracle/results.json"])
def test_no_path_reaches_a_file(served, path):
    _, client = served
    r = client.get(path)
    assert r.status_code == 404
    assert b"root:" not in r.content and b"SQLite" not in r.content


def test_refused_votes_change_nothing(served, arena_sweep):
    arena, client = served
    token = _token(client)
    pair = _pair(client, token)
    good = {"session": token, "pair_id": pair["id"], "choice": "b"}
    cases = [
        (client.get("/api/vote", params=good), 405),
        (client.post("/api/vote", content="not json", headers={"content-type": "application/json"}), 400),
        (client.post("/api/vote", data=good), 415),  # a form post (what another site could send)
        (client.post("/api/vote", json={**good, "choice": "left"}), 400),
        (client.post("/api/vote", json={**good, "extra": 1}), 400),
        (client.post("/api/vote", json={**good, "session": "forged"}), 403),
        (client.post("/api/vote", json={**good, "session": _token(client)}), 403),  # another session's pair
        (client.post("/api/vote", json={**good, "pair_id": "nope"}), 404),
        (client.post("/api/vote", json={**good, "pair_id": 5}), 400),
    ]
    for response, status in cases:
        assert response.status_code == status, response.text
        assert "error" in response.json()
    assert len(arena.store) == 0
    assert client.post("/api/vote", json=good).status_code == 200
    replay = client.post("/api/vote", json=good)
    assert replay.status_code == 409 and "already" in replay.json()["error"]
    assert [v.choice for v in read_votes(arena_sweep / "arena.sqlite")] == ["b"]


def test_a_rater_name_is_escaped_on_the_ratings_page(served):
    arena, client = served
    token = _token(client)
    rater = '<script>alert(1)</script>'
    pair = _pair(client, token, rater=rater)
    assert client.post("/api/vote", json={"session": token, "pair_id": pair["id"], "choice": "a"}).status_code == 200
    page = client.get("/ratings").text
    assert "<script>alert(1)</script>" not in page and "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert 'id="ratings"' in page and 'id="agreement"' in page
    assert client.get("/api/next", params={"session": token, "rater": "x" * 65}).status_code == 400
