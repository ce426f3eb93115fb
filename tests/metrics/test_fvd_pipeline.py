"""`metric=[fvd,artifact_count]` on the built-in world: a real FVD with N, recipe and CI, ranking the baselines.

One sweep (one process, the network loaded once, the references' features extracted once and
reused by every model through the feature cache) over oracle, noisy and static, on 4 samples (the
intervals apart at that size: noisy 1158 [1047, 1283], static 3269 [2908, 3652]).
"""

from __future__ import annotations

import json

import pytest

from tests.conftest import only_run_dir, read_jsonl, run_cli
from tests.features._weights import require_i3d_weights
from wfeval.api import MetricResult
from wfeval.features.weights import CONVERTED_SHA256
from wfeval.metrics.fvd import FVD

MODELS = ("oracle", "noisy", "static")


@pytest.fixture(scope="module")
def sweep(tmp_path_factory):
    require_i3d_weights()
    root = tmp_path_factory.mktemp("fvd_sweep")
    proc = run_cli(["-m", f"model={','.join(MODELS)}", "task=action_video", "metric=[fvd,artifact_count]",
                    "benchmark.num_samples=4", "metric.fvd.bootstrap=300", f"metric.fvd.feature_dir={root / 'features'}",
                    f"run.store_dir={root / 'store'}", "run.progress=off"], cwd=root, timeout=900)
    assert proc.returncode == 0, proc.stderr[-3000:]
    jobs = only_run_dir(root / "outputs" / "multirun")
    runs = {model: jobs / f"{i}_{model}" for i, model in enumerate(MODELS)}
    results = {m: json.loads((run / "results.json").read_text())["results"] for m, run in runs.items()}
    return proc, runs, results, root


def test_fvd_is_a_real_number_with_its_n_recipe_weights_and_ci(sweep):
    proc, _, results, _ = sweep
    fvd = results["static"]["gridworld.fvd"]
    assert fvd["valid"] and fvd["n_valid"] == 4 and fvd["n_skipped"] == 0
    assert fvd["raw_stats"]["n_real"] == fvd["raw_stats"]["n_generated"] == 4
    diag = fvd["diagnostics"]
    assert diag["value"] == fvd["raw_stats"]["fvd"] > 0
    assert diag["feature_dim"] == 400 and diag["rank_deficient"] is True
    assert diag["recipe"]["clip_length"] == 16 and diag["recipe"]["resize"] == 224
    assert diag["recipe"]["resize_mode"] == "bilinear" and diag["recipe"]["covariance"] == "N"
    assert diag["weights"]["sha256"] == CONVERTED_SHA256
    ci = fvd["confidence_interval"]
    assert ci["method"] == "bootstrap_percentile" and ci["low"] < diag["value"] < ci["high"]
    assert results["static"]["gridworld.artifact_count"]["normalized_stats"]["mean"] == 1.0
    table_line = next(line for line in proc.stdout.splitlines() if line.startswith("gridworld.fvd") and "n/a" not in line)
    assert "4/4" in table_line


def test_fvd_ranks_oracle_below_noisy_below_static(sweep):
    _, _, results, _ = sweep
    value = {m: results[m]["gridworld.fvd"]["diagnostics"]["value"] for m in MODELS}
    assert value["oracle"] == 0.0 and results["oracle"]["gridworld.fvd"]["confidence_interval"]["high"] == 0.0
    assert value["oracle"] < value["noisy"] < value["static"], value
    stats = {m: results[m]["gridworld.fvd"]["diagnostics"]["reference_stats"]["key"] for m in MODELS}
    assert len(set(stats.values())) == 1  # one reference set, whatever the model


def test_the_aggregate_is_rebuilt_from_metrics_jsonl_alone(sweep):
    _, runs, results, root = sweep
    rows = [MetricResult.from_dict(r) for r in read_jsonl(runs["noisy"] / "metrics.jsonl") if r["metric_id"] == "fvd"]
    rebuilt = FVD(feature_dir=str(root / "features"), bootstrap=300).aggregate(rows)
    stored = results["noisy"]["gridworld.fvd"]
    assert rebuilt.raw_stats == stored["raw_stats"]
    assert rebuilt.confidence_interval == stored["confidence_interval"]
