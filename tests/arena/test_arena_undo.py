"""The arena's undo and progress (issue 50, item 7): a session takes back only its own last votes,
newest first, and gets the same pair (same sides) to judge again; progress counts the pool's pairs a
rater has judged."""

from __future__ import annotations

import pytest

from wfeval.arena.core import Arena, ArenaError
from wfeval.arena.pool import Pool
from wfeval.storage.votes import VoteStore


def test_undo_takes_back_this_sessions_votes_newest_first_and_hands_the_pair_back(arena_sweep):
    with VoteStore(arena_sweep / "arena.sqlite") as store:
        arena = Arena(Pool([arena_sweep]), store, seed=0)
        mine, other = arena.new_session("client-1"), arena.new_session("client-2")
        total = len(arena.pool.candidates)
        assert arena.progress(mine, "ann") == {"judged": 0, "total": total}
        shown = []
        for choice in ("a", "tie"):
            pair = arena.next_pair(mine, "ann")
            shown.append(pair)
            arena.vote(mine, pair.pair_id, choice)
        theirs = arena.next_pair(other, "bob")
        arena.vote(other, theirs.pair_id, "b")
        assert arena.progress(mine, "ann") == {"judged": 2, "total": total}

        undone = arena.undo(mine)
        assert (undone.vote_id, undone.choice) == (shown[1].pair_id, "tie")  # the newest first
        back = arena.next_pair(mine, "ann")
        assert (back.candidate, back.left, back.right) == (shown[1].candidate, shown[1].left, shown[1].right)
        assert back.pair_id != shown[1].pair_id
        assert arena.undo(mine).vote_id == shown[0].pair_id
        with pytest.raises(ArenaError, match="no vote of this page to take back") as refused:
            arena.undo(mine)  # bob's vote is not this page's to take back
        assert refused.value.status == 404
        assert [v.rater for v in store.votes()] == ["bob"]
        assert arena.progress(mine, "ann") == {"judged": 0, "total": total}
