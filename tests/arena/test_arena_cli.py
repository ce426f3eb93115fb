"""``python -m wfeval.arena``: what it refuses (exit 2, one line naming why) and where it listens."""

from __future__ import annotations

from wfeval.cli.arena import _parser, main


def test_it_listens_on_this_machine_unless_a_host_is_given():
    assert _parser().parse_args(["x"]).host == "127.0.0.1"
    assert _parser().parse_args(["x", "--host", "0.0.0.0"]).host == "0.0.0.0"


def test_a_missing_folder_exits_2_naming_it(tmp_path, capsys):
    assert main([str(tmp_path / "nope"), "--no-browser"]) == 2
    err = capsys.readouterr().err
    assert "nope" in err and "Traceback" not in err


def test_one_model_alone_has_no_pair_to_judge(arena_sweep, capsys):
    run = next(p for p in arena_sweep.iterdir() if p.name.endswith("_oracle"))
    assert main([str(run), "--simulate", "5"]) == 2
    assert "no pair to judge" in capsys.readouterr().err
    assert not (run / "arena.sqlite").exists()  # nothing written into the run folder


def test_a_votes_file_of_another_format_is_refused(arena_sweep, tmp_path, capsys):
    bad = tmp_path / "votes.txt"
    bad.write_text("x")
    assert main([str(arena_sweep), "--import", str(bad)]) == 2
    assert ".jsonl or .csv" in capsys.readouterr().err
