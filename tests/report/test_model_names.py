"""A ``model=python`` run is labelled by the model's own ``name`` (or class name) in compare's leaderboard,
leaderboard.md and the report — not by the option ("python") or its class path cut at 40 characters."""

from __future__ import annotations

from tests.conftest import run_cli


def _run(tmp_path, folder, *model):
    proc = run_cli([*model, "benchmark.num_samples=2", "run.progress=off", f"hydra.run.dir={tmp_path / folder}",
                    f"run.store_dir={tmp_path / 'store'}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    return tmp_path / folder


def test_a_python_model_is_labelled_by_its_own_name_in_compare_leaderboard_md_and_the_report(tmp_path, capsys):
    from wfeval.cli.compare import main as compare
    from wfeval.cli.report import main as report

    mine = _run(tmp_path, "mine", "model=python", "model.object._target_=wfeval_test_models.RecordingModel")
    static = _run(tmp_path, "static", "model=static")
    assert (mine / "results.md").read_text().startswith("# recording on gridworld")

    assert compare([str(mine), str(static), "--width", "300", "--out", str(tmp_path / "board")]) == 0
    out = capsys.readouterr().out
    labels = [line.split()[1] for line in out.splitlines() if line[:1].isdigit()][:2]
    assert sorted(labels) == ["recording", "static"]
    shown = out.split("\nwrote ")[0]  # the tables and their legend (then the files written)
    assert "model.object._target_" not in shown and "python" not in shown
    board = (tmp_path / "board" / "leaderboard.md").read_text()
    assert "| recording |" in board and "python" not in board

    assert report([str(mine), "--out", str(tmp_path / "one.html")]) == 0
    page = (tmp_path / "one.html").read_text()
    assert ">recording<" in page and ">python<" not in page.replace("<b>python</b>", "")
