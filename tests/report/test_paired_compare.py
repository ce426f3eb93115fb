"""``python -m wfeval.compare RUN_A RUN_B``: paired differences on the shared samples, checked
against the runs' own per-sample rows; refusals say why."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from tests.conftest import cli_env, read_jsonl, run_cli, run_python
from wfeval.api import MetricResult
from wfeval.report.paired import NotComparable, compare_runs
from wfeval.report.runs import Entry


def _module(name, *args, cwd):
    return run_python(["-m", name, *map(str, args)], cwd=cwd, env=cli_env(), timeout=300)


def _run(root: Path, name: str, *overrides: str) -> Path:
    out = root / "runs" / name
    proc = run_cli([*overrides, "run.progress=off", "run.report=false", f"run.store_dir={root / 'store'}",
                    f"hydra.run.dir={out}"], cwd=root)
    assert proc.returncode == 0, proc.stderr
    return out


@pytest.fixture(scope="module")
def runs(tmp_path_factory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("paired")
    return {"oracle": _run(root, "oracle", "model=oracle"), "static": _run(root, "static", "model=static"),
            "oracle_again": _run(root, "oracle_again", "model=oracle"), "root": root}


def _values(run: Path, metric: str) -> dict[str, float]:
    return {r["sample_id"]: r["normalized_value"] for r in read_jsonl(run / "metrics.jsonl")
            if r["metric_id"] == metric and r["diagnostics"]["status"] in ("ok", "fail")}


def _line(stdout: str, metric: str) -> list[str]:
    return next(line for line in stdout.splitlines() if line.startswith(metric + " ")).split()


def test_oracle_against_static_is_a_significant_difference_of_the_right_size(runs):
    proc = _module("wfeval.compare", runs["oracle"], runs["static"], cwd=runs["root"])
    assert proc.returncode == 0, proc.stderr
    assert "paired comparison on gridworld: A = oracle, B = static" in proc.stdout
    assert "32 shared samples" in proc.stdout and "Holm–Bonferroni over 10 tests" in proc.stdout
    a, b = _values(runs["oracle"], "psnr"), _values(runs["static"], "psnr")
    expected = np.mean([a[s] for s in sorted(a)]) - np.mean([b[s] for s in sorted(a)])
    psnr = _line(proc.stdout, "psnr")
    assert psnr[1] == f"+{expected:.4g}" and psnr[2] == "dB"  # the unit beside the value
    assert psnr[-2:] == ["oracle", "better"]
    # every sample better by the same sign: no swap pattern is as extreme (p = 2/10001), × 10 tests at most
    assert float(psnr[5]) <= 10 * 2 / 10001 + 1e-9
    assert _line(proc.stdout, "ssim")[-2:] == ["oracle", "better"]
    assert _line(proc.stdout, "generated_rate")[-2:] == ["not", "significant"]  # both generate everything


def test_two_identical_runs_show_no_difference(runs):
    proc = _module("wfeval.compare", runs["oracle"], runs["oracle_again"], cwd=runs["root"])
    assert proc.returncode == 0, proc.stderr
    table = [line for line in proc.stdout.splitlines() if line.split()[:1] and line.split()[0] in (
        "generated_rate", "artifact_count", "psnr", "ssim", "flicker", "action_following", "agent_position_error")]
    assert len(table) == 7
    for line in table:
        fields = line.split()
        assert fields[1] in ("0", "0 dB", "0") and fields[-2:] == ["not", "significant"], line
        assert "[0, 0]" in line and " 1 " in line  # p = 1


def test_the_baseline_option_compares_every_model_with_it_and_writes_json(runs, tmp_path):
    proc = _module("wfeval.compare", runs["oracle"], runs["static"], runs["oracle_again"], "--baseline",
                   "static", "--out", tmp_path, cwd=runs["root"])
    assert proc.returncode == 0, proc.stderr
    comparisons = json.loads((tmp_path / "comparisons.json").read_text())
    assert len(comparisons) == 2 and {c["b"]["label"] for c in comparisons} == {"static"}
    assert all(c["holm_family"] == 20 for c in comparisons)  # one family: 2 comparisons × 10 measurements
    refused = _module("wfeval.compare", runs["oracle"], runs["static"], "--baseline", "nobody", cwd=runs["root"])
    assert refused.returncode == 2 and "is no row" in refused.stderr


def test_runs_without_shared_samples_are_refused_with_the_reason(runs):
    pong = _run(runs["root"], "pong", "benchmark=atari_pong", "model=static", "run.limit=4")
    proc = _module("wfeval.compare", runs["static"], pong, cwd=runs["root"])
    assert proc.returncode == 2
    assert "no shared samples" in proc.stderr and "gridworld" in proc.stderr and "atari_pong" in proc.stderr
    other = _run(runs["root"], "seed", "model=static", "benchmark.seed=99", "benchmark.num_samples=4")
    proc = _module("wfeval.compare", runs["static"], other, cwd=runs["root"])
    assert proc.returncode == 2
    assert "4 sample ids in common, but their content differs" in proc.stderr
    subset = _run(runs["root"], "subset", "model=oracle", "run.limit=5")
    proc = _module("wfeval.compare", subset, runs["static"], cwd=runs["root"])
    assert proc.returncode == 0, proc.stderr
    assert "5 shared samples (0 only in oracle, 27 only in static)" in proc.stdout


# -- FVD: the paired bootstrap over shared reference features -----------------------------------

def _fake_fvd_run(root: Path, name: str, real: np.ndarray, generated: np.ndarray) -> Entry:
    from wfeval.storage.artifacts import ArtifactStore

    store = ArtifactStore(root / "store")
    run = root / name
    run.mkdir(parents=True)
    rows = []
    for i, (r, g) in enumerate(zip(real, generated)):
        refs = {"reference_features": store.put_array(r.astype(np.float32), kind="features"),
                "generated_features": store.put_array(g.astype(np.float32), kind="features")}
        rows.append(MetricResult(sample_id=f"s{i:02d}", metric_id="fvd", artifact_refs=refs,
                                 diagnostics={"status": "ok"}).to_dict())
    (run / "metrics.jsonl").write_text("".join(json.dumps(row) + "\n" for row in rows))
    doc = {"run_id": name, "model": {"name": name}, "benchmark": {"id": "bench", "dataset_hash": "h"},
           "metrics": {"bench.fvd": {"version": "1.0", "higher_is_better": False}},
           "results": {"bench.fvd": {"valid": True, "n_valid": len(rows), "n_total": len(rows),
                                     "diagnostics": {"aggregator": "fvd", "recipe": {"covariance": "N"}}}}}
    (run / "results.json").write_text(json.dumps(doc))
    return Entry.of_document(doc, run)


def test_fvd_difference_uses_shared_references_and_the_paired_bootstrap(tmp_path):
    from wfeval.stats.frechet import bootstrap_values, frechet_distance_features

    rng = np.random.default_rng(0)
    real = rng.normal(size=(24, 6))
    close, far = real + rng.normal(0, 0.1, real.shape), real + rng.normal(1.5, 0.5, real.shape)
    a, b = _fake_fvd_run(tmp_path, "close", real, close), _fake_fvd_run(tmp_path, "far", real, far)
    comparison = compare_runs(a, b, label_a="close", label_b="far", n_resamples=200)
    [diff] = comparison.differences
    real32, close32, far32 = (x.astype(np.float32).astype(np.float64) for x in (real, close, far))
    expected = frechet_distance_features(real32, close32) - frechet_distance_features(real32, far32)
    assert diff.estimate == pytest.approx(expected, rel=1e-9) and diff.n == 24
    units = np.arange(24)
    boot = (bootstrap_values(real32, close32, n_resamples=200, seed=0, units1=units, units2=units)
            - bootstrap_values(real32, far32, n_resamples=200, seed=0, units1=units, units2=units))
    assert (diff.low, diff.high) == pytest.approx(tuple(np.percentile(boot, [2.5, 97.5])))
    assert diff.high < 0 and diff.verdict(0.05, "close", "far") == "close better"  # lower FVD is better


def test_an_fvd_pair_without_common_reference_features_is_not_compared(tmp_path):
    rng = np.random.default_rng(1)
    a = _fake_fvd_run(tmp_path, "a", rng.normal(size=(8, 4)), rng.normal(size=(8, 4)))
    b = _fake_fvd_run(tmp_path, "b", rng.normal(size=(8, 4)), rng.normal(size=(8, 4)))
    [diff] = compare_runs(a, b).differences
    assert diff.estimate is None and "at least 2 samples with features in both" in diff.reason
    with pytest.raises(NotComparable, match="no metrics.jsonl"):
        compare_runs(a, Entry.of_document(a.document, tmp_path / "nowhere"))


def test_a_measurement_computed_differently_is_not_compared(runs, tmp_path):
    import shutil

    changed = tmp_path / "static_max_db_50"
    shutil.copytree(runs["static"], changed)
    rows = read_jsonl(changed / "metrics.jsonl")
    for row in rows:
        if row["metric_id"] == "psnr" and "variant" in row["diagnostics"]:
            row["diagnostics"]["variant"] = row["diagnostics"]["variant"].replace("max_db=100", "max_db=50")
    (changed / "metrics.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    proc = _module("wfeval.compare", runs["oracle"], changed, cwd=runs["root"])
    assert proc.returncode == 0, proc.stderr
    psnr = " ".join(line for line in proc.stdout.splitlines() if line.startswith("psnr "))  # every block's line
    assert "not compared: computed differently" in psnr and "max_db=50" in psnr
    assert "Holm–Bonferroni over 9 tests" in proc.stdout  # the refused one is not a test
