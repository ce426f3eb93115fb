"""perf/pusht_table.py at small size: docs/pusht.md's calibration table comes from real runs, with
the oracle exact, static insensitive to its actions and the state oracle's probes reading the state."""

from __future__ import annotations

import importlib.util

import pytest

from tests.conftest import ROOT

pytest.importorskip("gym_pusht")


def _module():
    spec = importlib.util.spec_from_file_location("pusht_table", ROOT / "perf" / "pusht_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_pusht_table_fills_its_rows_from_real_runs(tmp_path):
    models = {"oracle": ("action_video", "controllability", "policy_evaluation"),
              "static": ("action_video", "controllability", "policy_evaluation"), "state_oracle": ("probing",)}
    text = _module().table(trajectories=2, windows=2, goal_trajectories=1, models=models, root=tmp_path)
    lines = text.splitlines()
    assert lines[0] == ("| model | psnr (dB) | ssim | action_sensitivity (dB) | policy_rank_correlation | return_error "
                        "| probe_r2 | goal_success |")
    rows = {line.split(" | ")[0].strip("| "): [c.strip(" |") for c in line.split(" | ")] for line in lines[2:5]}
    assert set(rows) == {"oracle", "static", "state_oracle"}
    assert rows["oracle"][1].startswith("100.00") and rows["oracle"][2].startswith("1.000")
    assert float(rows["oracle"][3].split()[0]) > 50.0 and rows["oracle"][6:] == ["—", "—"]
    assert rows["oracle"][4] == "1.00 [1.00, 1.00]" and rows["oracle"][5] == "0.000 [0.000, 0.000]"  # ranks exactly
    assert float(rows["static"][1].split()[0]) < 40.0 and rows["static"][3].startswith("0.00")
    assert rows["static"][4] == "0.00 [0.00, 0.00]" and float(rows["static"][5].split()[0]) > 0.0  # ranks nothing
    assert rows["state_oracle"][1:6] == ["—"] * 5 and float(rows["state_oracle"][6].split()[0]) >= 0.9
    assert lines[-1].startswith("pusht, 2 start(s) × 2 window(s); goal_reaching on 1 start(s) × 2; wall seconds")


def test_the_docs_show_the_table_the_script_writes():
    page = (ROOT / "docs" / "pusht.md").read_text(encoding="utf-8")
    head = ("| model | psnr (dB) | ssim | action_sensitivity (dB) | policy_rank_correlation | return_error | probe_r2 "
            "| goal_success |")
    assert head in page
    table = page[page.index(head):].split("\n\n")[0].splitlines()
    assert [line.split(" | ")[0].strip("| ") for line in table[2:]] == list(_module().MODELS)
