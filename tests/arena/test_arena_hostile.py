"""The arena against hostile inputs (issue 46, items 4-8): a votes file that links elsewhere or is
not a votes file, records naming files outside the sweep, oversized bodies, endless page loads,
one client under many rater names, rater names with escape sequences, a broken import, two
folders with one run id, a sweep without videos, and a model that lost every vote."""

from __future__ import annotations

import json
import shutil
import socket
import sqlite3

import numpy as np
import pytest

from wfeval.arena import core
from wfeval.arena.core import Arena, client_of
from wfeval.arena.pool import Pool
from wfeval.arena.simulate import simulate
from wfeval.cli.arena import main
from wfeval.report.runs import load_entries
from wfeval.report.votes import render_text, summarize
from wfeval.storage.votes import Vote, VoteStore, export_votes, read_votes

RED = "\x1b[31m"


def _other_program_db(path) -> bytes:
    db = sqlite3.connect(path)
    db.execute("CREATE TABLE accounts (name TEXT)")
    db.execute("INSERT INTO accounts VALUES ('alice')")
    db.commit()
    db.close()
    return path.read_bytes()


def _rewrite_generations(run_dir, change) -> None:
    path = run_dir / "generations.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
    path.write_text("".join(json.dumps(change(i, r)) + "\n" for i, r in enumerate(records)))


def _run(sweep, model: str):
    return next(p for p in sweep.iterdir() if p.name.endswith(f"_{model}"))


class TestTheVotesFileIsNeverOpenedThroughALink:
    def test_a_link_at_the_votes_file_is_refused_and_its_target_unchanged(self, arena_sweep, tmp_path, capsys):
        target = tmp_path / "other.db"
        before = _other_program_db(target)
        (arena_sweep / "arena.sqlite").symlink_to(target)
        assert main([str(arena_sweep), "--simulate", "3"]) == 2
        err = capsys.readouterr().err
        assert "arena.sqlite" in err and "symbolic link" in err and "Traceback" not in err
        assert target.read_bytes() == before
        assert not (tmp_path / "other.db-wal").exists()
        from wfeval.cli.compare import main as compare

        assert compare([str(arena_sweep)]) == 2  # nor read through it by compare (or report)
        assert "symbolic link" in capsys.readouterr().err
        assert target.read_bytes() == before and not (tmp_path / "other.db-shm").exists()

    @pytest.mark.parametrize("side", ["-wal", "-shm", "-journal"])
    def test_a_link_at_a_side_file_is_refused_and_its_target_unchanged(self, arena_sweep, tmp_path, side):
        target = tmp_path / "elsewhere"
        target.write_bytes(b"precious")
        (arena_sweep / f"arena.sqlite{side}").symlink_to(target)
        with pytest.raises(OSError, match="symbolic link"):
            VoteStore(arena_sweep / "arena.sqlite")
        assert target.read_bytes() == b"precious"
        with pytest.raises(ValueError, match="symbolic link"):  # readers (compare, report) too
            read_votes(_real_votes_file(tmp_path / "real.sqlite", side, target))

    def test_a_plain_votes_file_is_still_opened(self, arena_sweep):
        with VoteStore(arena_sweep / "arena.sqlite") as store:
            assert len(store) == 0


def _real_votes_file(path, side, target):
    VoteStore(path).close()
    path.with_name(path.name + side).unlink(missing_ok=True)
    path.with_name(path.name + side).symlink_to(target)
    return path


class TestAFileThatIsNotAVotesFileIsRefusedCleanly:
    @pytest.mark.parametrize("kind", ["garbage", "truncated", "another_program"])
    def test_every_command_exits_2_naming_the_file_and_changes_nothing(self, arena_sweep, capsys, kind):
        votes = arena_sweep / "arena.sqlite"
        if kind == "garbage":
            votes.write_bytes(b"this is not a database\n" * 100)
        elif kind == "truncated":
            with VoteStore(votes) as store:
                arena = Arena(Pool([arena_sweep]), store, seed=0)
                simulate(arena, 30, rater="sim")
            votes.write_bytes(votes.read_bytes()[:1500])
        else:
            _other_program_db(votes)
        before = votes.read_bytes()
        for args in (["--simulate", "2"], ["--ratings"], ["--export", str(arena_sweep.parent / "v.jsonl")]):
            assert main([str(arena_sweep), *args]) == 2
            err = capsys.readouterr().err
            assert "arena.sqlite" in err and "not a" in err and "--db" in err and "Traceback" not in err
        assert votes.read_bytes() == before


class TestOnlyStoreObjectsOfTheRunsAreShown:
    def test_a_record_without_a_digest_naming_a_file_outside_the_sweep_shows_nothing(self, arena_sweep, tmp_path):
        secret = tmp_path / "secret.npy"
        np.save(secret, np.full((16, 64, 64, 3), 200, np.uint8))
        oracle = _run(arena_sweep, "oracle")

        def point_outside(i, record):
            request, artifacts = record["request"], record["result"]["artifacts"]
            ref = artifacts["generated_video"] if i < 4 else request["references"]["video"]
            if i < 6:  # four generated videos, then two references
                ref.update(uri=str(secret), sha256="", media_type="application/x-npy")
            return record

        _rewrite_generations(oracle, point_outside)
        pool = Pool([arena_sweep])
        run_id = next(r for r, e in pool.entries.items() if e.run_dir.name == oracle.name)
        samples = sorted(pool.shown[run_id])
        assert len(samples) == 6  # the 4 records without a digest are not shown
        assert len(pool.candidates) == 30 - 2 * 6  # nor paired (the 2 edited references: other samples now)
        assert [pool.shown[run_id][s].reference is None for s in samples] == [True, True] + [False] * 4
        assert pool.video(run_id, samples[0], "reference") is None
        assert pool.video(run_id, samples[0]) is not None and (pool.video(run_id, samples[0]) != 200).any()

    def test_a_records_uri_is_never_opened_the_store_object_of_its_digest_is(self, arena_sweep, tmp_path):
        decoy = tmp_path / "decoy.npy"
        np.save(decoy, np.full((16, 64, 64, 3), 200, np.uint8))
        static = _run(arena_sweep, "static")
        pool = Pool([arena_sweep])
        run_id = next(r for r, e in pool.entries.items() if e.run_dir.name == static.name)
        sample = sorted(pool.shown[run_id])[0]
        stored = pool.video(run_id, sample)
        _rewrite_generations(static, lambda i, r: (r["result"]["artifacts"]["generated_video"].update(
            uri=str(decoy), media_type="application/x-npy"), r)[1])
        shown = Pool([arena_sweep]).video(run_id, sample)
        assert stored is not None and shown is not None and (shown == stored).all() and (shown != 200).any()

    def test_a_digest_not_in_the_store_shows_nothing(self, arena_sweep):
        noisy = _run(arena_sweep, "noisy")
        _rewrite_generations(noisy, lambda i, r: (r["result"]["artifacts"]["generated_video"].update(
            sha256="ab" * 32), r)[1])
        pool = Pool([arena_sweep])
        run_id = next(r for r, e in pool.entries.items() if e.run_dir.name == noisy.name)
        assert pool.video(run_id, sorted(pool.shown[run_id])[0]) is None


class TestOneClientCannotOutvoteARoom:
    def test_a_client_judges_each_pair_once_whatever_names_it_types(self, arena_sweep):
        with VoteStore(arena_sweep / "arena.sqlite") as store:
            arena = Arena(Pool([arena_sweep]), store, seed=0)
            for honest in range(2):
                assert simulate(arena, 30, rater=f"honest{honest}", seed=honest) == 30
            cast = 0
            for name in range(10):  # one client, ten rater names, always voting for static
                session = arena.new_session("one-client")
                while (issued := arena.next_pair(session, f"alias{name}")) is not None:
                    static_left = arena.pool.entries[issued.left].model_name == "static"
                    arena.vote(session, issued.pair_id, "a" if static_left else "b")
                    cast += 1
            assert cast == 30  # the pairs there are, once
            s = summarize(list(arena.pool.entries.values()), store.votes(), n_resamples=50)
        ratings = {s.labels[m]: s.elo[m][0] for m in s.order}
        assert ratings["oracle"] > ratings["static"]
        assert {v.client for v in store_votes(arena_sweep) if v.rater.startswith("alias")} == {"one-client"}

    def test_a_remote_machine_is_one_client_and_a_browser_here_is_its_cookie(self):
        assert client_of("192.168.1.7", "a" * 32)[0] == client_of("192.168.1.7", "b" * 32)[0]
        assert client_of("192.168.1.7", None)[1] is None  # no cookie needed
        assert client_of("127.0.0.1", "a" * 32) == (client_of("127.0.0.1", "a" * 32)[0], None)
        assert client_of("127.0.0.1", "a" * 32)[0] != client_of("127.0.0.1", "b" * 32)[0]
        fresh, cookie = client_of("::1", "<not a cookie>")
        assert cookie is not None and fresh == client_of("::1", cookie)[0]

    def test_endless_page_loads_never_lock_out_a_new_visitor(self, arena_sweep):
        pytest.importorskip("starlette")
        from starlette.testclient import TestClient

        from wfeval.arena.app import build_app

        with VoteStore(arena_sweep / "arena.sqlite") as store:
            arena = Arena(Pool([arena_sweep]), store, seed=0)
            first = arena.new_session()
            for _ in range(core.MAX_SESSIONS + 10):
                arena.new_session()
            assert len(arena._sessions) == core.MAX_SESSIONS
            with TestClient(build_app(arena)) as client:
                page = client.get("/")
                assert page.status_code == 200 and "wfeval_arena_client" in page.headers["set-cookie"]
                token = page.text.split('name="arena-token" content="')[1].split('"')[0]
                pair = client.get("/api/next", params={"session": token, "rater": "late"}).json()["pair"]
                assert client.post("/api/vote", json={"session": token, "pair_id": pair["id"],
                                                      "choice": "a"}).status_code == 200
                gone = client.get("/api/next", params={"session": first, "rater": "early"})
                assert gone.status_code == 403 and "reload" in gone.json()["error"]


def store_votes(sweep):
    return read_votes(sweep / "arena.sqlite")


class TestRequestBodiesAreBoundedWhileRead:
    def test_a_huge_declared_or_endless_body_is_refused_before_it_is_read(self, arena_sweep):
        pytest.importorskip("uvicorn")
        from tests.arena import server

        port = server.free_port()
        proc = server.start(arena_sweep, port)
        head = ("POST /api/vote HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
                "Connection: close\r\n")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                s.sendall((head + "Content-Length: 300000000\r\n\r\n{").encode())  # 1 byte of 300 MB sent
                assert s.recv(4096).startswith(b"HTTP/1.1 413")
            with socket.create_connection(("127.0.0.1", port), timeout=10) as s:
                s.sendall((head + "Transfer-Encoding: chunked\r\n\r\n").encode())
                s.sendall(b"".join(b"400\r\n" + b" " * 1024 + b"\r\n" for _ in range(8)))  # 8 KiB, never ended
                assert s.recv(4096).startswith(b"HTTP/1.1 413")
            assert read_votes(arena_sweep / "arena.sqlite") == []
        finally:
            proc.kill()
            proc.wait(timeout=10)


class TestWhatTheCommandAccepts:
    def test_rater_names_from_a_file_reach_the_terminal_inert(self, arena_sweep, tmp_path, capsys):
        from wfeval.cli.compare import main as compare

        with VoteStore(tmp_path / "src.sqlite") as store:
            simulate(Arena(Pool([arena_sweep]), store, seed=0), 6, rater="sim")
            votes = [Vote(**{**v.__dict__, "rater": f"{RED}evil\nforged line\r"}) for v in store.votes()]
        exported = tmp_path / "votes.jsonl"
        exported.write_text(export_votes(votes, "jsonl"))
        assert main([str(arena_sweep), "--import", str(exported), "--ratings"]) == 0
        out = capsys.readouterr().out
        assert compare([str(arena_sweep)]) == 0
        out += capsys.readouterr().out
        assert "\x1b" not in out and "\r" not in out and "\nforged line" not in out
        assert "?[31mevil forged line" in out

    def test_an_import_is_all_or_nothing_and_names_the_bad_line(self, arena_sweep, tmp_path, capsys):
        with VoteStore(tmp_path / "src.sqlite") as store:
            simulate(Arena(Pool([arena_sweep]), store, seed=0), 3, rater="sim")
            good = export_votes(store.votes(), "jsonl")
        bad = tmp_path / "votes.jsonl"
        bad.write_text(good + '{"vote_id": "x", "broken\n')
        assert main([str(arena_sweep), "--import", str(bad)]) == 2
        err = capsys.readouterr().err
        assert "line 4" in err and "nothing was imported" in err and "Traceback" not in err
        assert read_votes(arena_sweep / "arena.sqlite") == []
        csv_bad = tmp_path / "votes.csv"
        rows = export_votes(read_votes(tmp_path / "src.sqlite"), "csv").splitlines()
        prefix, _choice, client = rows[1].rsplit(",", 2)
        csv_bad.write_text("\n".join([*rows, f"{prefix.replace(prefix[:8], 'newvote_', 1)},maybe,{client}"]) + "\n")
        assert main([str(arena_sweep), "--import", str(csv_bad)]) == 2
        assert "line 5" in capsys.readouterr().err
        assert read_votes(arena_sweep / "arena.sqlite") == []

    def test_two_run_folders_with_one_run_id_are_refused_naming_both(self, arena_sweep, capsys):
        shutil.copytree(_run(arena_sweep, "oracle"), arena_sweep / "3_oracle_copy")
        assert main([str(arena_sweep), "--simulate", "2"]) == 2
        err = capsys.readouterr().err
        assert "0_oracle" in err and "3_oracle_copy" in err and "run id" in err
        assert not (arena_sweep / "arena.sqlite").exists()

    def test_a_sweep_without_videos_is_refused(self, arena_sweep, capsys):
        def probe_readout(i, record):  # what a probing run records instead of a video
            artifacts = record["result"]["artifacts"]
            artifacts["probe_readout"] = artifacts.pop("generated_video")
            return record

        for model in ("oracle", "noisy", "static"):
            _rewrite_generations(_run(arena_sweep, model), probe_readout)
        assert main([str(arena_sweep), "--no-browser"]) == 2
        err = capsys.readouterr().err
        assert "no run under" in err and "generated a video" in err and "probing" in err
        assert not (arena_sweep / "arena.sqlite").exists()


class TestARatingFromThePriorAloneIsFlagged:
    def test_a_model_that_lost_every_vote_is_flagged(self, arena_sweep):
        with VoteStore(arena_sweep / "arena.sqlite") as store:
            simulate(Arena(Pool([arena_sweep]), store, seed=0), 30, rater="sim", noise=0.5)
            votes = store.votes()

        turns = iter(range(len(votes)))

        def rigged(i: int, v: Vote) -> Vote:  # static always loses; oracle and noisy take turns
            loser = "static" if "static" in (v.model_a, v.model_b) else ("noisy", "oracle")[next(turns) % 2]
            return Vote(**{**v.__dict__, "choice": "b" if v.model_a == loser else "a"})

        s = summarize(load_entries([arena_sweep]), [rigged(i, v) for i, v in enumerate(votes)], n_resamples=50)
        assert {s.labels[m]: why for m, why in s.prior_only.items()} == {"static": "lost every vote"}
        text = render_text(s)
        assert "static lost every vote it was in" in text and "prior alone" in text
        static_row = next(line for line in text.splitlines() if line.split()[1:2] == ["static"])
        assert static_row.count("(prior)") == 2
        fair = summarize(load_entries([arena_sweep]), [Vote(**{**v.__dict__, "choice": "tie"}) for v in votes],
                         n_resamples=50)
        assert fair.prior_only == {} and fair.groups == []


def test_a_votes_file_of_the_first_schema_is_read_and_gains_the_client_column(tmp_path):
    from wfeval.storage.votes import FIELDS_V1

    path = tmp_path / "old.sqlite"
    db = sqlite3.connect(path)
    db.execute(f"CREATE TABLE votes ({', '.join(f + ' TEXT NOT NULL' for f in FIELDS_V1)}, PRIMARY KEY (vote_id))")
    db.execute(f"INSERT INTO votes VALUES ({', '.join('?' * len(FIELDS_V1))})",
               ["v1", "2026-01-01T00:00:00", "ann", "gridworld", "s0", "r0", "r1", "a0", "b0", "m", "n", "k", "l",
                "0" * 64, "1" * 64, "tie"])
    db.commit()
    db.close()
    assert [(v.vote_id, v.client) for v in read_votes(path)] == [("v1", "")]  # read as it is
    with VoteStore(path) as store:
        assert [(v.vote_id, v.choice, v.client) for v in store.votes()] == [("v1", "tie", "")]
