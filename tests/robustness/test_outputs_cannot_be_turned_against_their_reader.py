"""Outputs that cannot be turned against their reader (issue 32, items 10, 11, 15).

A run folder is data anyone could have written: its text reaches Markdown, CSV and HTML inert
(no injected heading, tag or spreadsheet formula); compare ranks by the numbers the run's own rows
give (the ones the paired comparison reads), naming a run whose results.json says otherwise; replay
verifies a run whose metric has a code option by its recorded identity; no output path of any
command overwrites a run's own files."""

from __future__ import annotations

import csv
import io
import json
import shutil

import pytest
import yaml

from tests.conftest import read_jsonl, run_cli
from wfeval.cli import compare, export, merge, replay, report

HOSTILE_NAME = '=HYPERLINK("http://evil.example")\n# Injected heading\n<iframe src="http://evil"></iframe><script>alert(1)</script>'
FORMULA_FOLDER = '=HYPERLINK("evil.example")'


@pytest.fixture(scope="module")
def genuine(tmp_path_factory):
    """Two genuine runs (oracle, static) of 3 gridworld samples, never changed: tests copy them."""
    root = tmp_path_factory.mktemp("outputs")
    for model in ("oracle", "static"):
        proc = run_cli([f"model={model}", "benchmark.num_samples=3", "run.progress=off", "run.report=false",
                        f"run.store_dir={root / 'store'}", f"hydra.run.dir={root / 'runs' / model}"], cwd=root)
        assert proc.returncode == 0, proc.stderr[-2000:]
    return root / "runs"


@pytest.fixture
def runs(genuine, tmp_path):
    shutil.copytree(genuine, tmp_path / "runs")
    return tmp_path / "runs"


def _edit_json(path, edit):
    document = json.loads(path.read_text())
    edit(document)
    path.write_text(json.dumps(document))


def _hostile_static(runs):
    """A careful forger: the static run's model name (manifest and results agree) and its recorded
    override ``model=`` (what names its leaderboard row) hold a formula, a heading, an iframe and a
    script; its folder's name is a formula."""
    for name in ("manifest.json", "results.json"):
        _edit_json(runs / "static" / name, lambda d: d["model"].__setitem__("name", HOSTILE_NAME))
    overrides = runs / "static" / ".hydra" / "overrides.yaml"
    values = yaml.safe_load(overrides.read_text())
    overrides.write_text(yaml.safe_dump([f"model={HOSTILE_NAME}" if v == "model=static" else v for v in values]))
    return (runs / "static").rename(runs / FORMULA_FOLDER)


def _no_traceback(captured):
    assert "Traceback" not in captured.out + captured.err


def _assert_inert_markdown(text):
    assert "<iframe" not in text and "<script" not in text
    assert "&lt;iframe" in text and "&lt;script&gt;" in text  # shown, as text
    assert not any(line.lstrip().startswith("# Injected") for line in text.splitlines())
    assert "](http" not in text


def _assert_no_formula(text):
    cells = [cell for row in csv.reader(io.StringIO(text)) for cell in row]
    assert not [c for c in cells if c[:1] in ("=", "+", "@", "\t", "\r")], cells
    assert not [c for c in cells if c.startswith("-") and not _number(c)]
    return cells


def _number(text):
    try:
        float(text)
    except ValueError:
        return False
    return True


def test_leaderboard_markdown_and_csv_show_a_hostile_name_and_folder_as_inert_text(runs, tmp_path, capsys):
    _hostile_static(runs)
    out = tmp_path / "board"
    assert compare.main([str(runs), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    _no_traceback(captured)
    assert "<script>" in captured.out and "\x1b" not in captured.out  # the terminal shows the text, one line
    assert "Injected heading" in captured.out and "\n# Injected" not in captured.out
    board = (out / "leaderboard.md").read_text()
    _assert_inert_markdown(board)
    assert "- …/script&gt; = =HYPERLINK(\"http://evil.example\") # Injected heading &lt;iframe" in board  # legend
    cells = _assert_no_formula((out / "leaderboard.csv").read_text())
    assert f"'{FORMULA_FOLDER}" in cells  # the run column: the folder's name, neutralised
    assert f"model={HOSTILE_NAME}" in cells  # the row's full name, as written (it starts with "model=")


@pytest.mark.parametrize("fmt", ["md", "csv"])
def test_export_writes_a_hostile_name_as_inert_text(runs, tmp_path, capsys, fmt):
    _hostile_static(runs)
    out = tmp_path / f"export.{fmt}"
    assert export.main([str(runs), "--format", fmt, "--out", str(out)]) == 0
    _no_traceback(capsys.readouterr())
    text = out.read_text()
    if fmt == "md":
        _assert_inert_markdown(text)
        assert text.count("\n") == 2 + 2 * 10 + 0  # header, rule, 10 measurements × 2 runs: no injected line
    else:
        cells = _assert_no_formula(text)
        assert sum(c.startswith("'=HYPERLINK(\"http://evil.example\")") for c in cells) == 10


def test_replayed_results_markdown_shows_a_hostile_name_as_inert_text(runs, tmp_path, capsys):
    folder = _hostile_static(runs)
    assert replay.main([str(folder), "--out", str(tmp_path / "replayed")]) == 0
    _no_traceback(capsys.readouterr())
    text = (tmp_path / "replayed" / "results.md").read_text()
    _assert_inert_markdown(text)
    assert text.splitlines()[0].startswith("# \\=HYPERLINK") or text.splitlines()[0].startswith("# =HYPERLINK")


def test_the_html_report_escapes_a_hostile_name(runs, tmp_path, capsys):
    pytest.importorskip("jinja2")
    _hostile_static(runs)
    out = tmp_path / "report.html"
    assert report.main([str(runs), "--out", str(out)]) == 0
    _no_traceback(capsys.readouterr())
    page = out.read_text()
    assert "<script>alert(1)</script>" not in page and '<iframe src="http://evil">' not in page
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page


# -- 11: compare ranks by the numbers the rows give ---------------------------------------------


def _psnr_rows(run):
    values = [r["normalized_value"] for r in read_jsonl(run / "metrics.jsonl")
              if r["metric_id"] == "psnr" and r["diagnostics"]["status"] in ("ok", "fail")]
    return sum(values) / len(values)


FORGED = 777.5


def _forge_psnr(run):
    """results.json says 777.5 dB where the run's rows say otherwise (a value with a point: a run's hex hashes,
    ids and paths could hold any digits, so "999" appeared in a config hash once)."""
    def forge(document):
        aggregate = document["results"]["gridworld.psnr"]
        aggregate["diagnostics"]["value"] = FORGED
        aggregate["normalized_stats"]["mean"] = aggregate["raw_stats"]["mean"] = FORGED
    _edit_json(run / "results.json", forge)


def test_compare_ranks_by_the_rows_and_names_a_run_whose_results_json_was_edited(runs, capsys):
    truth = _psnr_rows(runs / "static")

    _forge_psnr(runs / "static")
    assert compare.main([str(runs / "static"), str(runs / "oracle")]) == 0
    captured = capsys.readouterr()
    _no_traceback(captured)
    assert f"{runs / 'static'}: results.json disagrees with the run's own rows" in captured.err
    assert "gridworld.psnr: 777.5 in results.json" in captured.err and f"{truth:.4g} from metrics.jsonl" in captured.err
    assert "777.5" not in captured.out  # the forged value is ranked nowhere
    board = [line.split() for line in captured.out.splitlines() if line.split()[1:2] in (["oracle"], ["static"])]
    assert board[0][:2] == ["1", "oracle"]  # the rows' ranking, which the paired comparison below agrees with
    psnr = next(line for line in captured.out.splitlines() if line.startswith("psnr "))
    assert float(psnr.split()[1]) == pytest.approx(truth - 100.0, rel=1e-3)  # A = static, B = oracle: below
    assert any(f"{truth:.4g} [" in line for line in captured.out.splitlines() if " static " in f" {line} ")


def test_the_html_report_shows_the_rows_numbers_and_names_a_run_whose_results_json_was_edited(runs, tmp_path,
                                                                                              capsys):
    pytest.importorskip("jinja2")
    truth = _psnr_rows(runs / "static")

    _forge_psnr(runs / "static")
    out = tmp_path / "report.html"
    assert report.main([str(runs / "static"), str(runs / "oracle"), "--out", str(out)]) == 0
    captured = capsys.readouterr()
    _no_traceback(captured)
    assert f"{runs / 'static'}: results.json disagrees with the run's own rows" in captured.err
    page = out.read_text()
    assert "777.5" not in page  # the forged value is shown nowhere
    assert f"{truth:.4g}" in page


def test_export_writes_the_rows_numbers_and_names_a_run_whose_results_json_was_edited(runs, capsys):
    truth = _psnr_rows(runs / "static")

    _forge_psnr(runs / "static")
    assert export.main([str(runs / "static"), str(runs / "oracle"), "--format", "json"]) == 0
    captured = capsys.readouterr()
    _no_traceback(captured)
    assert f"{runs / 'static'}: results.json disagrees with the run's own rows" in captured.err
    assert "gridworld.psnr: 777.5 in results.json" in captured.err
    records = json.loads(captured.out)
    psnr = {r["model"]: r["value"] for r in records if r["measurement"] == "gridworld.psnr"}
    assert psnr["static"] == pytest.approx(truth, rel=1e-9)  # the rows' number, as compare and report show
    assert FORGED not in [r["value"] for r in records]
    assert export.main([str(runs / "oracle"), "--format", "csv"]) == 0
    assert "disagrees" not in capsys.readouterr().err  # a genuine run: nothing said


def test_compare_of_genuine_runs_says_nothing_about_verification(runs, capsys):
    assert compare.main([str(runs / "oracle"), str(runs / "static")]) == 0
    assert "disagrees" not in capsys.readouterr().err


def test_replay_check_verifies_a_run_whose_metric_has_a_code_option_by_its_recorded_identity(runs, tmp_path,
                                                                                             capsys):
    sentinel = tmp_path / "SENTINEL"
    config = runs / "static" / ".hydra" / "config.yaml"
    cfg = yaml.safe_load(config.read_text())
    cfg["metric"]["action_following"]["locator"] = {"_target_": "builtins.open", "file": str(sentinel),
                                                    "mode": "w"}
    config.write_text(yaml.safe_dump(cfg))
    assert replay.main([str(runs / "static"), "--check", "--out", str(tmp_path / "replayed")]) == 0
    captured = capsys.readouterr()
    _no_traceback(captured)
    assert "metric 'action_following': rebuilt as the registered ActionFollowing" in captured.out
    assert "locator._target_='builtins.open' names code" in captured.out
    assert "matches the run's results.json byte for byte" in captured.out
    assert not sentinel.exists()  # the code option was never run


def test_replay_check_still_fails_a_run_whose_rows_changed_under_a_code_option(runs, tmp_path, capsys):
    config = runs / "static" / ".hydra" / "config.yaml"
    cfg = yaml.safe_load(config.read_text())
    cfg["metric"]["action_following"]["locator"] = "os:getcwd"
    config.write_text(yaml.safe_dump(cfg))
    _edit_json(runs / "static" / "results.json",
               lambda d: d["results"]["gridworld.action_following"]["diagnostics"].__setitem__("value", 0.99))
    assert replay.main([str(runs / "static"), "--check", "--out", str(tmp_path / "replayed")]) == 1
    captured = capsys.readouterr()
    assert "DIFFERS from the run's results.json" in captured.out and "0.99 in the run" in captured.out


# -- 15: no output path overwrites a run's files ------------------------------------------------


def _unchanged(run):
    return {p.relative_to(run): p.read_bytes() for p in sorted(run.rglob("*")) if p.is_file()}


@pytest.mark.parametrize("command, argv, named", [
    (report, lambda r: [r / "oracle", "--out", r / "static" / "results.json"], "results.json of the run"),
    (export, lambda r: [r / "oracle", "--out", r / "static" / "metrics.jsonl"], "metrics.jsonl of the run"),
    (export, lambda r: [r / "oracle", "--format", "md", "--out", r / "static" / "results.md"], "results.md of the run"),
    (compare, lambda r: [r / "oracle", "--out", r / "static"], "is the run folder of a run"),
    (compare, lambda r: [r / "oracle", "--out", r / "static" / ".hydra"], ".hydra of the run"),
    (replay, lambda r: [r / "oracle", "--out", r / "static"], "is the run folder of a run"),
    (merge, lambda r: [r / "oracle", "--out", r / "static"], "is the run folder of a run"),
], ids=["report_results_json", "export_metrics_jsonl", "export_results_md", "compare_run_folder",
        "compare_hydra", "replay_other_run", "merge_into_a_run"])
def test_no_output_path_overwrites_a_runs_files(runs, capsys, command, argv, named):
    before = _unchanged(runs / "static")
    assert command.main([str(a) for a in argv(runs)]) == 2
    captured = capsys.readouterr()
    _no_traceback(captured)
    assert named in captured.err and str(runs / "static") in captured.err
    assert "never overwrites a run's" in captured.err
    assert _unchanged(runs / "static") == before


def test_derived_outputs_beside_a_run_stay_writable(runs, capsys):
    assert report.main([str(runs / "oracle"), "--out", str(runs / "static" / "report.html")]) == 0
    assert export.main([str(runs / "oracle"), "--out", str(runs / "static" / "table.csv")]) == 0
    assert replay.main([str(runs / "oracle")]) == 0 and replay.main([str(runs / "oracle")]) == 0  # its own replay/
    _no_traceback(capsys.readouterr())
