"""The end-of-run table shows value, interval, counts and why a metric has no number."""

from __future__ import annotations

from wfeval.metrics.base import default_aggregate
from wfeval.metrics.outcomes import scored, skipped
from wfeval.report.table import results_table


def test_table_shows_value_interval_counts_and_skip_reason():
    ok = [scored(f"s{i}", "rate", 1 if i < 3 else 0, passed=i < 3) for i in range(4)]
    rate = default_aggregate("rate", ok + [skipped("s9", "rate", "no video")], aggregator="ratio",
                             statistics=("ratio",))
    none = default_aggregate("fvd", [skipped("s1", "fvd", "not available")])
    text = results_table({"b.rate": rate, "b.fvd": none}, title="m on b")
    lines = text.splitlines()
    assert lines[0] == "m on b"
    assert lines[1].split() == ["measurement", "value", "95%", "CI", "valid/total", "skipped", "note"]
    rate_line = next(line for line in lines if line.startswith("b.rate"))
    assert "0.75" in rate_line and "4/5" in rate_line and "1× no video" in rate_line
    assert "[0.3006, 0.9544]" in rate_line  # Wilson 95% for 3/4
    fvd_line = next(line for line in lines if line.startswith("b.fvd"))
    assert "n/a" in fvd_line and "0/1" in fvd_line


def test_an_idm_accuracy_line_shows_the_ceiling_and_the_chance_level_beside_the_value():
    import dataclasses

    rows = [scored(f"s{i}", "idm_accuracy", v) for i, v in enumerate([0.5, 0.75, 1.0])]
    agg = default_aggregate("idm_accuracy", rows)
    agg = dataclasses.replace(agg, diagnostics={**agg.diagnostics, "ceiling": 0.8125, "chance": 0.21875})
    line = next(x for x in results_table({"b.idm_accuracy": agg}).splitlines() if x.startswith("b.idm_accuracy"))
    assert "IDM ceiling 0.8125, chance 0.2188" in line and "0.75" in line


def test_an_optimization_lift_line_shows_the_three_returns_it_is_read_against():
    from wfeval.metrics.policy_optimization import OptimizationLift

    rows = [scored("s0", "optimization_lift", None, components={"model": [0.5, 0.3], "simulator": [0.9, 0.7],
                                                                 "random": [0.1, 0.1]})]
    agg = OptimizationLift(bootstrap=0).aggregate(rows)
    line = next(x for x in results_table({"b.optimization_lift": agg}).splitlines()
                if x.startswith("b.optimization_lift"))
    assert agg.diagnostics["value"] == (0.4 - 0.1) / (0.8 - 0.1)
    assert "returns: model-trained 0.4, ceiling 0.8, floor 0.1" in line and "0.4286" in line
