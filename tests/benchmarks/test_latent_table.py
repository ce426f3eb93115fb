"""perf/latent_table.py at small size: the docs' tiny-jepa table is produced by real runs, with
the calibration rows where they belong (the state oracle at the ceiling, no pixels for encoders)."""

from __future__ import annotations

import importlib.util

import pytest

from tests.conftest import ROOT


def test_the_latent_table_script_fills_every_row_from_real_runs(tmp_path):
    pytest.importorskip("tiny_jepa")
    spec = importlib.util.spec_from_file_location("latent_table", ROOT / "perf" / "latent_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    # 16 training episodes = 4 trajectories: enough distinct pellet positions for x and y to differ
    text = module.table(trajectories=1, train_episodes=16, root=tmp_path, candidates=24)
    rows = {line.split(" | ")[0].strip("| "): line.split(" | ") for line in text.splitlines()[2:]}
    assert set(rows) == {"tiny_jepa", "static", "state_oracle", "random_projection", "pixels_pca", "static predictor",
                         "tiny_jepa (cem)"}
    assert rows["state_oracle"][4].startswith("1.00") and rows["state_oracle"][1] == "—"
    assert rows["static"][4] == "—" and rows["static"][1] != "—"
    assert all(cell.strip(" |") != "—" for cell in rows["tiny_jepa"][1:])
    success = {m: float(rows[m][8].split()[0]) for m in ("state_oracle", "static predictor")}  # 4 goals each
    assert success["state_oracle"] >= 0.75 > success["static predictor"]
    assert rows["pixels_pca"][8] == "—" and rows["static predictor"][4] == "—"
    assert rows["tiny_jepa (cem)"][8] != "—" and rows["tiny_jepa (cem)"][1] == "—"  # planning only


def test_the_latent_table_script_measures_how_far_tiny_jepa_imagines_against_how_far_the_goal_is(tmp_path):
    pytest.importorskip("tiny_jepa")
    spec = importlib.util.spec_from_file_location("latent_table", ROOT / "perf" / "latent_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    d = module.distances(trajectories=1, root=tmp_path, candidates=16)
    assert d["samples"] == 4
    assert d["step"] > 2 * d["goal"] > 0  # one imagined step overshoots the goal's distance (the page: 5.95 vs 1.41)
    assert d["best_score"] > 1.0  # no imagined plan comes closer to the goal than the present


def test_tiny_jepas_probe_per_variable_and_its_agent_heads_miss_are_the_pages_at_the_pages_size(tmp_path):
    pytest.importorskip("tiny_jepa")
    spec = importlib.util.spec_from_file_location("latent_table", ROOT / "perf" / "latent_table.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    v = module.variables(trajectories=8, train_episodes=32, root=tmp_path)  # the page's size: seconds, deterministic
    def text(x: float) -> str:
        return f"{x:.2f}".replace("-", "−")

    r2 = {k: text(x) for k, x in v["per_variable"].items()}
    balls = [v["per_variable"][k] for k in ("ball0_x", "ball0_y", "ball1_x", "ball1_y")]
    page = " ".join((ROOT / "docs" / "latent-models.md").read_text(encoding="utf-8").split())
    for fragment in (f"pellet x {r2['pellet_x']}, pellet y {r2['pellet_y']}", f"agent x {r2['agent_x']}, agent y "
                     f"{r2['agent_y']}", f"vertical velocities {r2['ball0_vy']} and {r2['ball1_vy']}",
                     f"positions from {text(min(balls))} to {text(max(balls))}",
                     f"median {v['agent_head_px']:.1f} px", f"over the {v['frames']} evaluation frames",
                     f"({v['agent_head_px_own']:.1f} px on episodes"):
        assert fragment in page, fragment
    assert v["agent_head_px"] > 2 * v["agent_head_px_own"]  # it reads the agent on its own data, not on these
