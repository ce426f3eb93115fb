"""Messages a user can act on (issue 35): a distribution metric at small N is flagged beside its value
in the printed table, a user dataset holds a minimum-sample rule as the built-ins do (a 2-sample run
is not "eligible: yes"), and a run on part of the benchmark's metrics is "not assessed", not "no"."""

from __future__ import annotations

import dataclasses

from tests.conftest import ROOT
from tests.robustness._run import wfeval
from wfeval.metrics.base import default_aggregate
from wfeval.metrics.outcomes import scored
from wfeval.report.table import evidence_line, results_table
from wfeval.results.evidence import evidence_gate

EXAMPLE = ROOT / "examples" / "datasets" / "gridworld_tiny"


def _fvd(n_real: int, n_generated: int, dim: int = 400):
    agg = default_aggregate("fvd", [scored(f"s{i}", "fvd", 10.0) for i in range(n_generated)])
    note = n_real <= dim or n_generated <= dim
    return dataclasses.replace(agg, diagnostics={**agg.diagnostics, "value": 123.0, "n_real": n_real,
                                                 "n_generated": n_generated, "feature_dim": dim, "rank_deficient": note})


def _line(agg, key="b.fvd"):
    return next(x for x in results_table({key: agg}).splitlines() if x.startswith(key))


def test_fvd_on_8_clips_is_flagged_rank_deficient_beside_its_value():
    line = _line(_fvd(8, 8))
    assert "123" in line and "⚠ small N=8 ≤ dim 400: rank-deficient, compare at equal N" in line


def test_a_distribution_metric_above_its_dimension_but_under_256_samples_is_flagged_small():
    assert "⚠ small N=100 < 256: biased, compare only at equal N" in _line(_fvd(100, 120, dim=64))
    assert "⚠" not in _line(_fvd(300, 300, dim=64))  # enough samples: no warning
    assert "⚠" not in _line(default_aggregate("psnr", [scored("s0", "psnr", 30.0)]), "b.psnr")  # not a distribution


def test_a_run_on_part_of_the_suite_is_not_assessed_naming_the_missing_metrics():
    psnr = default_aggregate("psnr", [scored(f"s{i}", "psnr", 30.0) for i in range(40)])
    gate = evidence_gate({"min_valid": {"default": 32}}, results={"psnr": psnr}, metric_versions={},
                         dataset_hash=None, split="test", required_metrics=["psnr", "ssim", "flicker"])
    assert gate["eligible"] is False and gate["missing_metrics"] == ["ssim", "flicker"]
    assert evidence_line(gate).startswith("eligible: not assessed for eligibility: metrics ssim, flicker missing")
    few = default_aggregate("psnr", [scored("s0", "psnr", 30.0)])
    gate = evidence_gate({"min_valid": {"default": 32}}, results={"psnr": few}, metric_versions={},
                         dataset_hash=None, split="test", required_metrics=["psnr", "ssim"])
    assert evidence_line(gate).endswith("; also: psnr: 1 valid samples < required 32")


def test_a_four_sample_run_on_a_user_dataset_is_not_eligible_and_says_why(monkeypatch, capsys, tmp_path):
    ran = wfeval(monkeypatch, capsys, tmp_path, "benchmark=folder", f"benchmark.dataset_root={EXAMPLE}",
                 "model=oracle", samples=None)
    assert ran.code == 0, ran.err
    assert "eligible: yes" not in ran.out
    assert "eligible: no (1 reason): generated_rate, artifact_count, psnr, ssim, flicker: 4 valid samples < " \
           "required 32" in ran.out
    lowered = wfeval(monkeypatch, capsys, tmp_path, "benchmark=folder", f"benchmark.dataset_root={EXAMPLE}",
                     "model=oracle", "benchmark.evidence.min_valid.default=4", samples=None, name="lowered")
    assert "eligible: yes" in lowered.out  # the rule is the user's to set
    subset = wfeval(monkeypatch, capsys, tmp_path, "benchmark=folder", f"benchmark.dataset_root={EXAMPLE}",
                    "model=oracle", "metric=[psnr]", samples=None, name="subset")
    assert "eligible: not assessed for eligibility: metrics generated_rate, artifact_count, ssim, flicker missing" \
           in subset.out


def test_the_advice_for_missing_measures_names_metric_only_when_the_run_was_given_one():
    psnr = default_aggregate("psnr", [scored(f"s{i}", "psnr", 30.0) for i in range(40)])
    gate = evidence_gate({"min_valid": {"default": 32}}, results={"psnr": psnr}, metric_versions={},
                         dataset_hash=None, split="test", required_metrics=["psnr", "ssim"])
    assert "run without metric=[...] to assess" in evidence_line(gate, explicit=True)
    unasked = evidence_line(gate, explicit=False)
    assert "metric=[" not in unasked and "add them with extra_metrics=[ssim] to assess" in unasked
    task = evidence_gate({"measures": ["probe_r2"]}, results={"psnr": psnr}, metric_versions={},
                         dataset_hash=None, split="test", required_metrics=["psnr"])
    assert evidence_line(task, explicit=False) == ("eligible: not assessed for eligibility: metrics probe_r2 missing "
                                                   "(the task's evidence needs them: add them with "
                                                   "extra_metrics=[probe_r2] to assess)")
