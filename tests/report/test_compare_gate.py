"""``python -m wfeval.compare CANDIDATE BASELINE --gate MEASURE[=MARGIN]``: a regression gate for CI on
compare's paired statistics. A worse model exits 1 naming the measure and its regressed samples (checked
against the runs' own per-sample rows); an equal one exits 0; a gate that cannot be checked says why."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.conftest import cli_env, read_jsonl, run_cli, run_python
from wfeval.report.paired.gate import Gate, parse_gate

N = 8  # exact permutation p of 8 samples all one way: 2/256, × 2 tests (Holm) < 0.05


def _run(root: Path, name: str, model: str) -> Path:
    out = root / "runs" / name
    proc = run_cli([f"model={model}", f"benchmark.num_samples={N}", "metric=[psnr,ssim]", "run.progress=off",
                    "run.report=false", f"run.store_dir={root / 'store'}", f"hydra.run.dir={out}"], cwd=root)
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("gate")
    return {"oracle": _run(root, "oracle", "oracle"), "static": _run(root, "static", "static"),
            "oracle_again": _run(root, "oracle_again", "oracle"), "root": root}


def _compare(runs, *args):
    return run_python(["-m", "wfeval.compare", *map(str, args), "--width", "200"], cwd=runs["root"], env=cli_env(),
                      timeout=300)


def _psnr(run: Path) -> dict[str, float]:
    return {r["sample_id"]: r["normalized_value"] for r in read_jsonl(run / "metrics.jsonl")
            if r["metric_id"] == "psnr" and r["diagnostics"]["status"] == "ok"}


def test_a_worse_model_fails_the_gate_naming_the_measure_and_its_regressed_samples(runs):
    proc = _compare(runs, runs["static"], runs["oracle"], "--gate", "psnr=0.5", "--gate", "ssim")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    gate_lines = proc.stdout[proc.stdout.index("\ngate "):].strip().splitlines()
    assert gate_lines[0].startswith("gate gridworld.psnr (static − oracle): regressed: -")
    assert "margin 0.5" in gate_lines[0]
    static, oracle = _psnr(runs["static"]), _psnr(runs["oracle"])
    worse = sorted((s for s in static if static[s] - oracle[s] < -0.5), key=lambda s: static[s] - oracle[s])
    assert len(worse) == N  # a frozen video is far worse on every sample
    assert gate_lines[1] == f"  {N} regressed sample(s) (worse than the margin, worst first):"
    listed = [re.match(r"\s+(\S+)\s", line).group(1) for line in gate_lines[2:2 + N]]
    assert listed == worse
    assert any(line.startswith("gate gridworld.ssim (static − oracle): regressed:") for line in gate_lines)
    assert gate_lines[-1] == "gate failed: 2 of 2 gated measure(s) regressed or not checked"
    assert "p 0.0078 (Holm over 2 gated: 0.0156), n 8" in gate_lines[0]  # every sample one way: 2/2^8, × 2 gates


def test_an_equal_model_passes_the_gate_and_exits_0(runs):
    proc = _compare(runs, runs["oracle_again"], runs["oracle"], "--gate", "psnr", "--gate", "gridworld.ssim=0.01")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    # two runs of one model are told apart by their run folders
    assert ("gate gridworld.psnr (oracle (oracle_again) − oracle (oracle)): passed: 0 dB [0, 0], p 1 (Holm over 2 "
            "gated: 1), n 8; margin 0") in proc.stdout
    assert proc.stdout.rstrip().endswith("gate passed: no regression on 2 gated measure(s)")


def test_a_regression_within_the_margin_passes(runs):
    static, oracle = _psnr(runs["static"]), _psnr(runs["oracle"])
    margin = max(oracle[s] - static[s] for s in static) + 1  # wider than every sample's loss
    proc = _compare(runs, runs["static"], runs["oracle"], "--gate", f"psnr={margin}")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert "gate gridworld.psnr (static − oracle): passed: -" in proc.stdout


def test_every_row_is_gated_against_the_baseline(runs):
    proc = _compare(runs, runs["root"] / "runs", "--baseline", "oracle (oracle)", "--gate", "psnr")
    assert proc.returncode == 1, proc.stdout + proc.stderr  # static regressed, the second oracle did not
    assert "gate gridworld.psnr (static − oracle (oracle)): regressed: -" in proc.stdout
    assert "gate gridworld.psnr (oracle (oracle_again) − oracle (oracle)): passed: 0 dB" in proc.stdout
    assert "gate failed: 1 of 2 gated measure(s) regressed or not checked" in proc.stdout


def test_too_few_samples_to_call_any_regression_fail_the_gate_as_not_checked(runs):
    """8 samples give an exact p of at least 2/256 = 0.0078: at alpha 0.005 nothing could be called, so
    even an equal model does not pass a gate that could never fail."""
    proc = _compare(runs, runs["oracle_again"], runs["oracle"], "--gate", "psnr", "--alpha", "0.005")
    assert proc.returncode == 1, proc.stdout + proc.stderr
    assert ("gate gridworld.psnr (oracle (oracle_again) − oracle (oracle)): not checked: too few samples (8): the "
            "smallest p they can give is 0.00781, 0.00781 after Holm, not below 0.005") in proc.stdout
    assert "regressed sample" not in proc.stdout


@pytest.mark.parametrize("gate,words", [
    ("fvd", "--gate fvd: no measurement of"),
    ("psnr=-1", "the margin is a non-negative number"),
    ("psnr=abc", "the margin after '=' is a number"),
])
def test_a_gate_that_cannot_be_checked_exits_2_saying_why(runs, gate, words):
    proc = _compare(runs, runs["static"], runs["oracle"], "--gate", gate)
    assert proc.returncode == 2 and words in proc.stderr, proc.stderr


def test_a_gate_needs_a_baseline(runs):
    proc = _compare(runs, runs["static"], "--gate", "psnr")
    assert proc.returncode == 2 and "give two runs (CANDIDATE BASELINE) or --baseline MODEL" in proc.stderr


def test_gate_syntax():
    assert parse_gate("psnr") == Gate("psnr", 0.0)
    assert parse_gate("gridworld.psnr=0.25") == Gate("gridworld.psnr", 0.25)
    assert Gate("psnr").matches("gridworld.psnr") and not Gate("psnr").matches("gridworld.imagined_psnr")
