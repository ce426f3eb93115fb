"""Which measure predicts usefulness: Spearman across models, oriented by each measure's direction,
models joined across runs of different tasks; shown by python -m wfeval.compare and the HTML report."""

from __future__ import annotations

import json

import pytest

from tests.conftest import ROOT, cli_env, run_python
from wfeval.report.usefulness import usefulness
from wfeval.results.record import RunResults

# model -> (psnr, mse, flicker (constant), goal_success, policy_rank_correlation)
MODELS = {"a": (40.0, 4.0, 0.9, 1.0, 1.0), "b": (30.0, 9.0, 0.9, 0.5, 0.2), "c": (20.0, 16.0, 0.9, 0.75, 0.6),
          "d": (10.0, 25.0, 0.9, 0.0, -0.4)}


def agg(value: float) -> dict:
    return {"valid": True, "n_valid": 4, "n_total": 4, "n_skipped": 0, "diagnostics": {"value": value},
            "confidence_interval": None}


def document(model: str, protocol: str, measures: dict, directions: dict) -> RunResults:
    return RunResults.from_dict({"run_id": f"{model}-{protocol}", "model": {"name": model}, "benchmark": {"id": "gridworld"},
            "protocol": {"name": protocol, "driver": protocol},
            "results": {f"gridworld.{m}": agg(v) for m, v in measures.items()},
            "metrics": {f"gridworld.{m}": {"higher_is_better": directions[m]} for m in measures},
            "evidence": {"eligible": False, "reasons": []}, "scorecard": {}})


DIRECTIONS = {"psnr": True, "mse": False, "flicker": True, "goal_success": True, "policy_rank_correlation": True,
              "generated_rate": True}


def documents() -> list[RunResults]:
    out = []
    for model, (psnr, mse, flicker, success, rank) in MODELS.items():
        out.append(document(model, "open_loop", {"psnr": psnr, "mse": mse, "flicker": flicker, "generated_rate": 1.0},
                            DIRECTIONS))
        out.append(document(model, "planning", {"goal_success": success}, DIRECTIONS))
        out.append(document(model, "policy_evaluation", {"policy_rank_correlation": rank}, DIRECTIONS))
    return out


def test_spearman_across_models_oriented_by_each_measures_direction():
    table = usefulness(documents(), n_resamples=200)
    assert table.models == ["a", "b", "c", "d"]
    found = {(r["target"].split(":")[0], r["measure"]): r for r in table.rows}
    # psnr ranks a > b > c > d; goal_success a > c > b > d: ρ = 1 − 6·2/(4·15) = 0.8
    assert found[("planning", "open_loop:gridworld.psnr")]["rho"] == pytest.approx(0.8)
    # mse (lower is better) is oriented: the same ranking as psnr, the same ρ
    assert found[("planning", "open_loop:gridworld.mse")]["rho"] == pytest.approx(0.8)
    assert found[("policy_evaluation", "open_loop:gridworld.psnr")]["rho"] == pytest.approx(0.8)
    flat = found[("planning", "open_loop:gridworld.flicker")]
    assert flat["rho"] is None and flat["n"] == 4  # a measure that does not vary ranks nothing
    assert not any("generated_rate" in r["measure"] for r in table.rows)  # not a quality measure
    row = found[("planning", "open_loop:gridworld.psnr")]
    assert -1.0 <= row["low"] <= row["rho"] <= row["high"] <= 1.0


def test_fewer_than_three_models_give_no_table():
    assert not usefulness([d for d in documents() if d.model.name in ("a", "b")])


def test_compare_and_the_report_show_it(tmp_path):
    for i, doc in enumerate(documents()):
        run = tmp_path / "runs" / f"{i:02d}"
        run.mkdir(parents=True)
        (run / "results.json").write_text(json.dumps(doc.to_dict()))
    done = run_python(["-m", "wfeval.compare", str(tmp_path / "runs"), "--out", str(tmp_path)],
                      cwd=ROOT, env=cli_env(), timeout=120)
    assert done.returncode == 0, done.stderr
    assert "which measure predicts usefulness" in done.stdout and "open_loop:gridworld.psnr" in done.stdout
    assert "+0.80" in (tmp_path / "usefulness.md").read_text()
    from wfeval.report.html import page
    from wfeval.report.html.load import RunData

    runs = [RunData(tmp_path / "runs" / f"{i:02d}", {}, doc) for i, doc in enumerate(documents())]
    section = page._usefulness(runs)
    assert section and section["models"] == ["a", "b", "c", "d"]
    assert any(row[1] == "open_loop:gridworld.mse" and row[2] == "+0.80" for row in section["rows"])


def test_a_resample_in_which_a_side_does_not_vary_is_left_out_of_the_interval_never_counted_as_zero():
    # goal_success takes two values over 7 models (as the gridworld baselines'): many resamples draw one
    # value only; a measure that orders the models exactly as their success has ρ = 1 in every other one
    success = {"m0": 1.0, "m1": 1.0, "m2": 1.0, "m3": 1.0, "m4": 0.0, "m5": 0.0, "m6": 0.0}
    docs = []
    for model, value in success.items():
        docs.append(document(model, "open_loop", {"psnr": value * 50 + 10}, DIRECTIONS))
        docs.append(document(model, "planning", {"goal_success": value}, DIRECTIONS))
    [row] = [r for r in usefulness(docs).rows if r["measure"].endswith("psnr")]
    assert row["rho"] == pytest.approx(1.0) and (row["low"], row["high"]) == (1.0, 1.0)
