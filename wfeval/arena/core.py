"""The arena's state: sessions, the pairs handed out, which pair next, and casting a vote.

**Which pair next** (for one rater): never a pair (sample and two runs) this rater has judged or
holds; first the model pairs of a column nobody has judged yet, then samples nobody has judged,
then the pair whose order is least certain (Bradley–Terry on the votes so far: ``P(a beats b)``
closest to ½), then the model pair with the fewest votes; a random draw breaks the remaining ties.
Sides are put left/right at random. The web app (:mod:`.app`) and the simulated rater
(:mod:`.simulate`) both go through :class:`Arena`.

**Who votes**: a session (one page load) belongs to a *client*, the pseudonym of the browser (a
cookie the server issued) or, for a visitor from another machine, of its address
(:func:`client_of`). A client judges each pair (sample and two runs) once, whatever rater names
it types: a rater name is a label, not an identity. Sessions are kept in a least-recently-used
list of ``MAX_SESSIONS``: a new visitor always gets one, and the oldest idle session is forgotten
(its page asks to be reloaded).

**Progress and undo**: :meth:`Arena.progress` says how many of the pool's pairs a rater (its client,
under any name) has judged; :meth:`Arena.undo` takes back the last vote a session cast (only its
own, newest first) and hands the same pair, sides unchanged, back to it to judge again.
"""

from __future__ import annotations

import hashlib
import ipaddress
import secrets
import sqlite3
import threading
from collections import Counter, OrderedDict
from dataclasses import dataclass
from datetime import datetime, timezone

import numpy as np

from wfeval.arena.pool import Candidate, Pool
from wfeval.report.votes import model_id
from wfeval.storage.votes import CHOICES, Vote, VoteStore

MAX_RATER = 64
MAX_SESSIONS = 10_000


class ArenaError(Exception):
    """A refused request: ``status`` is the HTTP status it gets (4xx), the message says why."""

    def __init__(self, status: int, message: str):
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Issued:
    pair_id: str
    session: str
    client: str
    rater: str
    candidate: Candidate
    left: str  # run id shown left ("a" of the vote)
    right: str


def pseudonym(identity: str) -> str:
    """What a vote records of its client: a short hash, never the cookie itself."""
    return hashlib.sha256(f"wfeval-arena-client\0{identity}".encode()).hexdigest()[:16]


def client_of(host: str | None, cookie: str | None) -> tuple[str, str | None]:
    """The client of a request and the cookie to set (None: none to set). A visitor from another
    machine is its address (all its browsers and cookies are one client); on this machine (or an
    address that is not an IP: an in-process test) the browser's cookie, a new one when it has none."""
    try:
        remote = host is not None and not ipaddress.ip_address(host).is_loopback
    except ValueError:
        remote = False
    if remote:
        return pseudonym(f"address:{host}"), None
    if isinstance(cookie, str) and 20 <= len(cookie) <= 64 and cookie.replace("-", "").replace("_", "").isalnum():
        return pseudonym(f"cookie:{cookie}"), None
    new = secrets.token_urlsafe(24)
    return pseudonym(f"cookie:{new}"), new


def check_rater(rater: object) -> str:
    if not isinstance(rater, str) or not rater.strip() or len(rater) > MAX_RATER or not rater.isprintable():
        raise ArenaError(400, f"a rater name is 1-{MAX_RATER} printable characters")
    return rater.strip()


class Arena:
    def __init__(self, pool: Pool, store: VoteStore, seed: int | None = None):
        self.pool, self.store = pool, store
        self._rng = np.random.default_rng(seed)
        self._lock = threading.Lock()
        self._sessions: OrderedDict[str, list] = OrderedDict()  # token -> [client, held pair id, votes cast]
        self._issued: dict[str, Issued] = {}

    def new_session(self, client: str | None = None) -> str:
        """A session token for ``client`` (None: a client of its own); the least recently used
        session is forgotten when there are ``MAX_SESSIONS`` (its pair goes back)."""
        with self._lock:
            while len(self._sessions) >= MAX_SESSIONS:
                _, (_, held, _) = self._sessions.popitem(last=False)
                if held is not None:
                    self._issued.pop(held, None)
            token = secrets.token_urlsafe(24)
            self._sessions[token] = [client or pseudonym(f"session:{token}"), None, []]
            return token

    def _session(self, token: object) -> str:
        if not isinstance(token, str) or token not in self._sessions:
            raise ArenaError(403, "unknown session token: reload the page")
        self._sessions.move_to_end(token)
        return token

    def issued(self, pair_id: object) -> Issued:
        found = self._issued.get(pair_id) if isinstance(pair_id, str) else None
        if found is None:
            raise ArenaError(404, "no such pair")
        return found

    def next_pair(self, session: object, rater: object) -> Issued | None:
        """The pair this session holds, or a new one for ``rater``; None when the rater has judged all."""
        rater = check_rater(rater)
        with self._lock:
            token = self._session(session)
            client, held, _ = self._sessions[token]
            if held is not None and self._issued[held].rater == rater:
                return self._issued[held]
            if held is not None:  # another rater name now: the held pair goes back
                del self._issued[held]
            choice = self._choose(client, rater)
            if choice is None:
                self._sessions[token][1] = None
                return None
            left, right = (choice.run_a, choice.run_b) if self._rng.random() < 0.5 else (choice.run_b, choice.run_a)
            issued = Issued(secrets.token_urlsafe(18), token, client, rater, choice, left, right)
            self._issued[issued.pair_id] = issued
            self._sessions[token][1] = issued.pair_id
            return issued

    def _choose(self, client: str, rater: str) -> Candidate | None:
        votes = self.store.votes()
        mine = {(v.column, v.sample_id, frozenset((v.run_id_a, v.run_id_b))) for v in votes
                if v.client == client or v.rater == rater}  # judged by this client, under any name
        mine |= {(i.candidate.column, i.candidate.sample_id, frozenset((i.left, i.right)))
                 for i in self._issued.values() if i.client == client or i.rater == rater}
        open_ = [c for c in self.pool.candidates if (c.column, c.sample_id, frozenset((c.run_a, c.run_b))) not in mine]
        if not open_:
            return None
        pairs = Counter((v.column, frozenset((v.run_id_a, v.run_id_b))) for v in votes)
        samples = Counter((v.column, v.sample_id) for v in votes)
        strength = self._strengths(votes)
        draw = self._rng.random(len(open_))

        def key(i: int) -> tuple:
            c = open_[i]
            n_pair = pairs[(c.column, frozenset((c.run_a, c.run_b)))]
            gap = abs(strength.get(c.run_a, 0.0) - strength.get(c.run_b, 0.0))  # |logit P(a beats b)|
            return (n_pair > 0, samples[(c.column, c.sample_id)] > 0, round(gap, 6), n_pair, draw[i])

        return open_[min(range(len(open_)), key=key)]

    def _strengths(self, votes: list[Vote]) -> dict[str, float]:
        from wfeval.stats.ratings import bradley_terry, win_matrix

        runs = sorted({r for v in votes for r in (v.run_id_a, v.run_id_b)})
        if len(runs) < 2:
            return {}
        index = {r: i for i, r in enumerate(runs)}
        winners = [index[v.run_id_b if v.choice == "b" else v.run_id_a] for v in votes]
        losers = [index[v.run_id_a if v.choice == "b" else v.run_id_b] for v in votes]
        theta = bradley_terry(win_matrix(winners, losers, [v.choice in ("tie", "both_bad") for v in votes], len(runs)))
        return {r: float(theta[i]) for r, i in index.items()}

    def vote(self, session: object, pair_id: object, choice: object) -> Vote:
        """Commit the vote on a pair this session holds; a replayed or foreign pair is refused (4xx)."""
        if choice not in CHOICES:
            raise ArenaError(400, f"choice must be one of {', '.join(CHOICES)}")
        if not isinstance(pair_id, str) or not pair_id or len(pair_id) > 100:
            raise ArenaError(400, "pair_id must be the id of the pair shown")
        with self._lock:
            token = self._session(session)
            if self.store.has(pair_id):
                raise ArenaError(409, "this pair has already been voted on")
            issued = self._issued.get(pair_id)
            if issued is None:
                raise ArenaError(404, "no such pair (it was never shown, or was handed back)")
            if issued.session != token:
                raise ArenaError(403, "this pair was shown to another session")
            a, b = self.pool.entries[issued.left], self.pool.entries[issued.right]
            sample = issued.candidate.sample_id
            vote = Vote(vote_id=pair_id, cast_at=datetime.now(timezone.utc).isoformat(timespec="microseconds"),
                        rater=issued.rater, column=issued.candidate.column, sample_id=sample,
                        run_a=a.folder, run_b=b.folder, run_id_a=a.run_id, run_id_b=b.run_id,
                        model_a=a.model_name, model_b=b.model_name, model_key_a=model_id(a), model_key_b=model_id(b),
                        video_a=self.pool.shown[a.run_id][sample].generated["sha256"],
                        video_b=self.pool.shown[b.run_id][sample].generated["sha256"], choice=str(choice),
                        client=issued.client)
            try:
                self.store.add(vote)
            except sqlite3.Error as exc:
                raise ArenaError(503, f"the vote was not saved: the votes file failed ({exc})") from exc
            del self._issued[pair_id]
            self._sessions[token][1] = None
            self._sessions[token][2].append(issued)
            return vote

    def undo(self, session: object) -> Vote:
        """Take back the last vote this session cast and hand its pair (same sides) back to it; 404
        when the session has none left to take back."""
        with self._lock:
            token = self._session(session)
            client, held, cast = self._sessions[token]
            while cast:
                issued = cast.pop()
                vote = next((v for v in self.store.votes() if v.vote_id == issued.pair_id), None)
                if vote is None:  # removed from the file since: nothing to take back there
                    continue
                try:
                    self.store.remove(vote.vote_id)
                except sqlite3.Error as exc:
                    raise ArenaError(503, f"the vote was not taken back: the votes file failed ({exc})") from exc
                if held is not None:  # the pair on screen goes back
                    self._issued.pop(held, None)
                again = Issued(secrets.token_urlsafe(18), token, client, issued.rater, issued.candidate,
                               issued.left, issued.right)
                self._issued[again.pair_id] = again
                self._sessions[token][1] = again.pair_id
                return vote
            raise ArenaError(404, "no vote of this page to take back")

    def progress(self, session: object, rater: object) -> dict[str, int]:
        """How many of the pool's pairs this session's client, or ``rater`` under any client, has judged."""
        rater = check_rater(rater)
        with self._lock:
            client = self._sessions[self._session(session)][0]
        judged = {(v.column, v.sample_id, frozenset((v.run_id_a, v.run_id_b))) for v in self.store.votes()
                  if v.client == client or v.rater == rater}
        pairs = {(c.column, c.sample_id, frozenset((c.run_a, c.run_b))) for c in self.pool.candidates}
        return {"judged": len(judged & pairs), "total": len(pairs)}

    def summary(self, n_resamples: int = 1000):
        from wfeval.report.votes import summarize

        votes = self.store.votes()
        return summarize(list(self.pool.entries.values()), votes, n_resamples=n_resamples) if votes else None
