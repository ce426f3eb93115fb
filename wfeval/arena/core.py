"""The arena's state: sessions, the pairs handed out, which pair next, and casting a vote.

**Which pair next** (for one rater): never a pair (sample and two runs) this rater has judged or
holds; first the model pairs of a column nobody has judged yet, then samples nobody has judged,
then the pair whose order is least certain (Bradley–Terry on the votes so far: ``P(a beats b)``
closest to ½), then the model pair with the fewest votes; a random draw breaks the remaining ties.
Sides are put left/right at random. The web app (:mod:`.app`) and the simulated rater
(:mod:`.simulate`) both go through :class:`Arena`.
"""

from __future__ import annotations

import secrets
import threading
from collections import Counter
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
    rater: str
    candidate: Candidate
    left: str  # run id shown left ("a" of the vote)
    right: str


def check_rater(rater: object) -> str:
    if not isinstance(rater, str) or not rater.strip() or len(rater) > MAX_RATER or not rater.isprintable():
        raise ArenaError(400, f"a rater name is 1-{MAX_RATER} printable characters")
    return rater.strip()


class Arena:
    def __init__(self, pool: Pool, store: VoteStore, seed: int | None = None):
        self.pool, self.store = pool, store
        self._rng = np.random.default_rng(seed)
        self._lock = threading.Lock()
        self._sessions: dict[str, str | None] = {}  # token -> the pair id it holds
        self._issued: dict[str, Issued] = {}

    def new_session(self) -> str:
        with self._lock:
            if len(self._sessions) >= MAX_SESSIONS:
                raise ArenaError(429, "too many open sessions; restart the arena")
            token = secrets.token_urlsafe(24)
            self._sessions[token] = None
            return token

    def _session(self, token: object) -> str:
        if not isinstance(token, str) or token not in self._sessions:
            raise ArenaError(403, "unknown session token: reload the page")
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
            held = self._sessions[token]
            if held is not None and self._issued[held].rater == rater:
                return self._issued[held]
            if held is not None:  # another rater name now: the held pair goes back
                del self._issued[held]
            choice = self._choose(rater)
            if choice is None:
                self._sessions[token] = None
                return None
            left, right = (choice.run_a, choice.run_b) if self._rng.random() < 0.5 else (choice.run_b, choice.run_a)
            issued = Issued(secrets.token_urlsafe(18), token, rater, choice, left, right)
            self._issued[issued.pair_id] = issued
            self._sessions[token] = issued.pair_id
            return issued

    def _choose(self, rater: str) -> Candidate | None:
        votes = self.store.votes()
        mine = {(v.column, v.sample_id, frozenset((v.run_id_a, v.run_id_b))) for v in votes if v.rater == rater}
        mine |= {(i.candidate.column, i.candidate.sample_id, frozenset((i.left, i.right)))
                 for i in self._issued.values() if i.rater == rater}
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
                        video_b=self.pool.shown[b.run_id][sample].generated["sha256"], choice=str(choice))
            self.store.add(vote)
            del self._issued[pair_id]
            self._sessions[token] = None
            return vote

    def summary(self, n_resamples: int = 1000):
        from wfeval.report.votes import summarize

        votes = self.store.votes()
        return summarize(list(self.pool.entries.values()), votes, n_resamples=n_resamples) if votes else None
