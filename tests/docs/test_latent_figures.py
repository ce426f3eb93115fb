"""perf/latent_figures.py at small size: the measured tables of docs/latent-models.md come from real
runs, the calibration rows where they belong, and the page holds the tables the script prints (the
same rows and columns; the numbers are the full-size run's)."""

from __future__ import annotations

import importlib.util
import re
import sys

import pytest

from tests.conftest import ROOT

PAGE = (ROOT / "docs" / "latent-models.md").read_text(encoding="utf-8")


@pytest.fixture(scope="module")
def figures():
    spec = importlib.util.spec_from_file_location("latent_figures", ROOT / "perf" / "latent_figures.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules["latent_figures"] = module  # model=python imports the CellEncoder row by this name
    spec.loader.exec_module(module)
    yield module
    del sys.modules["latent_figures"]


def _rows(text: str) -> dict[str, list[str]]:
    return {line.split(" | ")[0].strip("| "): [c.strip(" |") for c in line.split(" | ")[1:]]
            for line in text.splitlines()[2:] if line.startswith("|")}


def _page_table(first_header: str) -> str:
    found = re.search(rf"^(\| {re.escape(first_header)} \|.*?)\n\n", PAGE, re.M | re.S)
    assert found, f"docs/latent-models.md no longer holds the table starting '| {first_header} |'"
    return found.group(1)


def test_the_probe_table_ranks_the_calibration_encoders_and_the_page_holds_its_rows(figures, tmp_path):
    rows = {k: v for k, v in figures.PROBES.items() if v[0] == "gridworld"}  # Pong: the full run's
    text = figures.probes_table(samples=4, train_episodes=4, root=tmp_path, rows=rows)
    got = _rows(text)
    assert list(got) == list(rows)
    oracle, static = got["state_oracle"], got["state_oracle, static predictor"]
    assert oracle[0].startswith("1.00") and all(c == "1.00" for c in oracle[3:7])
    assert float(oracle[1]) > float(oracle[2])  # above chance (4 training episodes miss some velocity classes)
    assert float(static[3]) > float(static[6])  # a latent that never moves loses the state further ahead
    for pixels in ("random_projection (dim 64)", "pixels_pca (dim 64)"):
        assert float(got[pixels][0].split()[0]) < 0.6, pixels  # an untrained encoder: far below the ceiling
    assert got["random_projection (dim 1024)"][7].endswith("of 1024")
    assert float(oracle[7].split()[0]) < float(got["pixels_pca (dim 64)"][7].split()[0])  # 6 variables, 64 axes
    page = _page_table("encoder")
    assert text.splitlines()[0] == page.splitlines()[0]
    assert set(rows) <= set(_rows(page)) and set(_rows(page)) <= set(figures.PROBES)


def test_the_planning_table_puts_the_true_future_above_random_plans_and_the_page_holds_its_rows(figures, tmp_path,
                                                                                                 monkeypatch):
    monkeypatch.setenv("WFEVAL_TRUST", "latent_figures.")
    text = figures.planning_table(goals=4, root=tmp_path, candidates=16)
    got = _rows(text)
    assert list(got) == list(figures.PLANNERS)
    success = {m: float(v[0].split()[0]) for m, v in got.items()}
    assert success["state_oracle"] >= 0.75 > success["state_oracle, static predictor"]
    assert success["oracle (pixel planner)"] == 1.0
    page = _page_table("planner")
    assert text.splitlines()[0] == page.splitlines()[0] and set(_rows(page)) == set(figures.PLANNERS)


def test_the_atariari_table_on_the_page_is_the_one_the_script_prints_at_the_pages_sizes(figures, tmp_path,
                                                                                       pong_atariari_state_oracle):
    pytest.importorskip("ale_py")
    # deterministic (seeded episodes, exact probes): every figure; the state_oracle row is the run
    # test_probing_atariari.py reads too (tests/conftest.py), made once by the script's own overrides
    text = figures.atariari_table(root=tmp_path, done={"state_oracle": pong_atariari_state_oracle["folder"]})
    page = _page_table("encoder | episodes test / train / validation")
    assert text.strip() == page.strip()
    got = _rows(text)
    assert float(got["random_projection (dim 64)"][1].split()[0]) > 0.5 > float(got["state_oracle"][2])  # no ceiling here


def test_the_mlp_table_keeps_the_exact_state_at_the_ceiling_and_the_page_holds_its_rows(figures, tmp_path):
    rows = {k: v for k, v in figures.MLP_ROWS.items() if k in ("state_oracle", "pixels_pca (dim 64)")}
    text = figures.mlp_table(samples=4, train_episodes=16, root=tmp_path, rows=rows,
                             extra=["protocol.mlp_hidden=64", "protocol.mlp_epochs=60"])
    got = _rows(text)
    assert list(got) == list(rows)
    oracle = got["state_oracle"]
    assert oracle[0].startswith("1.00") and float(oracle[1].split()[0]) > 0.9  # ridge exact, the MLP near it
    assert float(got["pixels_pca (dim 64)"][1].split()[0]) < float(oracle[1].split()[0])
    page = _page_table("encoder | probe R² ridge")
    assert text.splitlines()[0] == page.splitlines()[0] and set(_rows(page)) == set(figures.MLP_ROWS)
