"""Calibration without people: a simulated rater who prefers the video closer to the reference
recovers oracle > noisy > static on gridworld; intervals shrink as votes grow; a rater who votes at
random gives intervals that overlap. Then the ratings and the measure-agreement table appear in
``python -m wfeval.compare`` and in the HTML report; votes move between machines without duplicates."""

from __future__ import annotations

import pytest

from wfeval.arena.core import Arena
from wfeval.arena.pool import Pool
from wfeval.arena.simulate import simulate
from wfeval.report.runs import load_entries
from wfeval.report.votes import summarize
from wfeval.storage.votes import VoteStore, export_votes, parse_votes, read_votes


def _ratings(sweep, raters, noise, seed=0):
    with VoteStore(sweep / "arena.sqlite") as store:
        arena = Arena(Pool([sweep]), store, seed=seed)
        for i in range(raters):
            assert simulate(arena, 30, rater=f"sim{i}", noise=noise, seed=seed + i) == 30
        s = summarize(list(arena.pool.entries.values()), store.votes(), n_resamples=500)
    return {s.labels[m]: s.elo[m] for m in s.order}, s


def test_a_simulated_rater_recovers_oracle_over_noisy_over_static(arena_sweep):
    ratings, s = _ratings(arena_sweep, raters=1, noise=0.1)
    assert list(ratings) == ["oracle", "noisy", "static"]
    assert ratings["oracle"][1] > ratings["static"][2]  # separated: oracle's low end above static's high end
    assert s.used == 30 and s.stale == 0 and s.raters == {"sim0": 30}
    psnr = next(r for r in s.agreement if r["measure"] == "gridworld.psnr")
    assert psnr["decided"] >= 20 and psnr["share"] >= 0.8 and psnr["tau"] == pytest.approx(1.0)


def test_intervals_shrink_as_votes_grow(arena_sweep, tmp_path):
    few, _ = _ratings(arena_sweep, raters=1, noise=0.3, seed=1)
    (arena_sweep / "arena.sqlite").unlink()
    many, s = _ratings(arena_sweep, raters=4, noise=0.3, seed=1)
    width = lambda r: sum(h - lo for _, lo, h, _ in r.values()) / len(r)  # noqa: E731
    assert width(many) < 0.8 * width(few)
    assert s.kappa["method"] == "Fleiss' κ" and s.kappa["items"] == 30 and s.kappa["raters"] == 4


def test_a_random_rater_gives_intervals_that_overlap(arena_sweep):
    ratings, _ = _ratings(arena_sweep, raters=2, noise=1.0, seed=3)
    spans = list(ratings.values())
    for i in range(len(spans)):
        for j in range(i + 1, len(spans)):
            assert spans[i][1] <= spans[j][2] and spans[j][1] <= spans[i][2]


def test_compare_and_the_report_show_the_ratings_and_the_measure_agreement(arena_sweep, tmp_path, capsys):
    from wfeval.cli.compare import main as compare
    from wfeval.report.html import write_report

    _ratings(arena_sweep, raters=1, noise=0.0)
    assert compare([str(arena_sweep)]) == 0
    out = capsys.readouterr().out
    assert "arena (Elo)" in out  # the leaderboard's column
    assert "People's ratings" in out and "Which measure agrees with people" in out
    assert "gridworld.psnr" in out.split("Which measure agrees")[1]
    html = write_report([arena_sweep], tmp_path / "r.html").read_text()
    assert 'id="arena-ratings"' in html and 'id="arena-agreement"' in html
    ratings_table = html.split('id="arena-ratings"')[1].split("</table>")[0]
    assert ratings_table.index("oracle") < ratings_table.index("noisy") < ratings_table.index("static")
    assert 'data-measurement="gridworld.arena"' in html  # a chart of the ratings beside the measures'
    assert "strips-gridworld.arena" not in html  # no sample pictures for a rating over votes
    assert compare([str(arena_sweep), "--baseline", "static", "--resamples", "200"]) == 0
    paired = capsys.readouterr().out.split("People's ratings")[0].split("paired comparison on gridworld")[1:]
    assert len(paired) == 2 and all("\nssim " in p and "\narena " not in p for p in paired)  # not per sample


def test_a_vote_on_other_outputs_is_stale_and_left_out(arena_sweep):
    _ratings(arena_sweep, raters=1, noise=0.0)
    votes = read_votes(arena_sweep / "arena.sqlite")
    changed = [v.__class__(**{**v.__dict__, "video_a": "0" * 64}) if i < 5 else v for i, v in enumerate(votes)]
    s = summarize(load_entries([arena_sweep]), changed, n_resamples=100)
    assert (s.used, s.stale) == (25, 5)


@pytest.mark.parametrize("fmt", ["jsonl", "csv"])
def test_exported_votes_merge_into_another_file_without_duplicates(arena_sweep, tmp_path, fmt):
    _ratings(arena_sweep, raters=1, noise=0.2)
    votes = read_votes(arena_sweep / "arena.sqlite")
    text = export_votes(votes, fmt)
    with VoteStore(tmp_path / "other.sqlite") as other:
        assert other.import_votes(parse_votes(text, fmt)) == 30
        assert other.import_votes(parse_votes(text, fmt)) == 0  # the same votes again: nothing added
        assert other.votes() == votes
    with pytest.raises(ValueError, match="line 1"):
        list(parse_votes('{"vote_id": "x"}\n', "jsonl"))
