"""Weak signals flagged where the number is shown (issue 50, item 3): an IDM whose ceiling does not
clear chance, a value whose interval contains chance, a rating from the prior alone — one rule
(wfeval.report.signals), shown by the terminal table, results.md, compare's leaderboard and the report."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from wfeval.report.signals import flags, label
from wfeval.results.run_results import Aggregate

EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "datasets" / "square_lerobot"


def _idm(value, low, high, ceiling, ceiling_low, ceiling_high, chance=0.0):
    return Aggregate(valid=True, n_valid=12, n_total=12,
                     confidence_interval={"low": low, "high": high, "method": "bootstrap"},
                     diagnostics={"value": value, "ceiling": ceiling, "chance": chance, "idm": {"name": "x"},
                                  "ceiling_interval": {"low": ceiling_low, "high": ceiling_high}})


def test_the_researchers_lerobot_figures_are_an_idm_too_weak_and_a_value_at_chance():
    # issue 50: ceiling 0.14 (its interval reaching below 0, the R² chance), value 0.18 [-0.56, 0.92]
    weak = _idm(0.18, -0.56, 0.92, 0.14, -0.21, 0.49)
    assert [f.code for f in flags(weak)] == ["idm_too_weak", "at_chance"]
    assert label(weak) == "⚠ IDM too weak; ⚠ at chance"
    assert "ceiling 0.14 [-0.21, 0.49]" in flags(weak)[0].detail and "chance 0" in flags(weak)[0].detail


@pytest.mark.parametrize("value,low,high,ceiling,c_low,c_high,chance,expected", [
    (0.8, 0.7, 0.9, 0.9, 0.85, 0.95, 0.0, []),  # a strong IDM and a value clear of chance
    (0.3, 0.26, 0.34, 0.6, 0.55, 0.65, 0.25, []),  # discrete: chance 0.25, both clear of it
    (0.3, 0.2, 0.4, 0.6, 0.55, 0.65, 0.25, ["at_chance"]),  # the value's interval holds 0.25
    (0.3, 0.26, 0.34, 0.6, 0.25, 0.95, 0.25, ["idm_too_weak"]),  # the ceiling's lower bound is chance
    (-0.5, -0.9, -0.1, 0.9, 0.85, 0.95, 0.0, []),  # below chance, confidently: not "at chance"
])
def test_the_flags_follow_the_intervals_against_chance(value, low, high, ceiling, c_low, c_high, chance, expected):
    assert [f.code for f in flags(_idm(value, low, high, ceiling, c_low, c_high, chance))] == expected


def test_a_ceiling_without_an_interval_is_too_weak_only_at_or_below_chance_and_invalid_is_never_flagged():
    one = Aggregate(valid=True, confidence_interval=None,
                    diagnostics={"value": 0.5, "ceiling": 0.2, "chance": 0.25, "idm": {}})
    assert [f.code for f in flags(one)] == ["idm_too_weak"]
    assert flags(Aggregate(valid=True, diagnostics={"value": 0.5, "ceiling": 0.3, "chance": 0.25, "idm": {}})) == []
    assert flags(Aggregate(valid=False, diagnostics={"ceiling": 0.0, "chance": 0.25, "idm": {}})) == []
    prior = Aggregate(valid=True, diagnostics={"value": 1, "prior_only": "lost every vote"})
    assert [f.code for f in flags(prior)] == ["prior_only"]


@pytest.fixture(scope="module")
def weak_run(tmp_path_factory):
    """The one-split LeRobot example under static: its IDMs (trained on one episode each) read the
    actions no better than chance, and static's value is at chance."""
    from tests.conftest import compose
    from wfeval.pipeline.runner import run_from_config

    root = tmp_path_factory.mktemp("weak")
    run_from_config(compose(["task=controllability", "benchmark=lerobot", f"benchmark.dataset_root={EXAMPLE}",
                             "model=static", f"run.store_dir={root / 'store'}"]), output_dir=root / "static")
    return root / "static"


def test_a_weak_idm_and_a_value_at_chance_are_flagged_in_the_table_results_md_compare_and_the_report(weak_run,
                                                                                                   capsys):
    from wfeval.api import AggregateResult
    from wfeval.cli.compare import main as compare
    from wfeval.report.table import results_table
    from wfeval.results.record import read_results

    document = read_results(weak_run / "results.json")
    idm = document.results["lerobot.idm_accuracy"]
    assert [f.code for f in flags(idm)] == ["idm_too_weak", "at_chance"]  # ceiling and value reach chance 0
    assert [m for m, a in document.results.items() if flags(a)] == ["lerobot.idm_accuracy"]

    table = results_table({m: AggregateResult.from_dict(a.to_dict()) for m, a in document.results.items()})
    row = next(line for line in table.splitlines() if line.startswith("lerobot.idm_accuracy"))
    assert "⚠ IDM too weak; ⚠ at chance" in row
    assert "⚠" not in table.replace(row, "")

    md = (weak_run / "results.md").read_text()
    assert "**lerobot.idm_accuracy**: IDM too weak — the IDM's ceiling" in md and "at chance — the interval" in md
    row = next(line for line in md.splitlines() if line.startswith("| lerobot.idm_accuracy |"))
    assert "⚠ IDM too weak; ⚠ at chance |" in row  # beside the value in the table too

    assert compare([str(weak_run), "--width", "400"]) == 0
    out = capsys.readouterr().out
    assert "⚠ IDM too weak; ⚠ at chance" in out and "⚠ = a weak signal" in out

    html = (weak_run / "report.html").read_text()
    assert '<span class="weak">⚠ IDM too weak; ⚠ at chance</span>' in html
