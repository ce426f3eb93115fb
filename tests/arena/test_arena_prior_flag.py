"""A rating from the prior alone is flagged where compare and the report show the arena column
(wfeval.report.signals): a model that lost every vote gets "⚠ prior only" beside its Elo."""

from __future__ import annotations

from wfeval.arena.core import Arena
from wfeval.arena.pool import Pool
from wfeval.arena.simulate import simulate
from wfeval.cli.compare import main as compare
from wfeval.storage.votes import Vote, VoteStore


def _rig(sweep, static_loses: bool) -> None:
    """Simulated votes on the sweep, rewritten: static loses every vote it is in (or every vote is a tie)."""
    with VoteStore(sweep / "arena.sqlite") as store:
        simulate(Arena(Pool([sweep]), store, seed=0), 30, rater="sim", noise=0.5)
        votes = store.votes()
    (sweep / "arena.sqlite").unlink()
    turns = iter(range(len(votes)))
    with VoteStore(sweep / "arena.sqlite") as store:
        for v in votes:
            if static_loses:
                loser = "static" if "static" in (v.model_a, v.model_b) else ("noisy", "oracle")[next(turns) % 2]
                choice = "b" if v.model_a == loser else "a"
            else:
                choice = "tie"
            store.add(Vote(**{**v.__dict__, "choice": choice}))


def test_a_model_that_lost_every_vote_is_flagged_prior_only_in_compares_arena_column(arena_sweep, capsys):
    _rig(arena_sweep, static_loses=True)
    assert compare([str(arena_sweep), "--width", "400"]) == 0
    out = capsys.readouterr().out
    rows = {m: next(line for line in out.splitlines() if line.rstrip().endswith(f"_{m}"))  # the leaderboard's row
            for m in ("oracle", "noisy", "static")}
    assert "⚠ prior only" in rows["static"]
    assert "⚠ prior only" not in rows["oracle"] and "⚠ prior only" not in rows["noisy"]
    assert "prior only (a rating no vote bounds)" in out


def test_ratings_the_votes_bound_are_not_flagged(arena_sweep, capsys):
    _rig(arena_sweep, static_loses=False)
    assert compare([str(arena_sweep), "--width", "400"]) == 0
    assert "⚠" not in capsys.readouterr().out
