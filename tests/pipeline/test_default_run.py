"""`python -m wfeval` with no overrides writes a complete, readable run directory."""

from __future__ import annotations

import json

from tests.conftest import only_run_dir, read_jsonl, run_cli

RUN_FILES = ("manifest.json", "events.jsonl", "steps.jsonl", "generations.jsonl", "samples.jsonl",
             "metrics.jsonl", "results.json", "report.html")


def test_default_run_writes_every_file_with_namespaced_results(tmp_path):
    proc = run_cli([], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    run = only_run_dir(tmp_path / "outputs" / "runs")
    for name in RUN_FILES:
        assert (run / name).is_file(), name
    manifest = json.loads((run / "manifest.json").read_text())
    assert manifest["status"] == "completed"
    assert manifest["schema_version"] == "wfeval.run/1"
    assert manifest["versions"]["wfeval"] and manifest["versions"]["numpy"]
    assert manifest["model"]["name"] == "oracle" and manifest["benchmark"]["id"] == "gridworld"
    assert len(manifest["config_hash"]) == 64

    results = json.loads((run / "results.json").read_text())["results"]
    assert list(results) == ["gridworld.generated_rate", "gridworld.artifact_count", "gridworld.psnr", "gridworld.ssim",
                             "gridworld.flicker", "gridworld.action_following", "gridworld.agent_position_error",
                             "gridworld.dynamic_psnr", "gridworld.dynamic_ssim", "gridworld.break_even_horizon"]
    rate = results["gridworld.generated_rate"]
    assert (rate["n_total"], rate["n_valid"], rate["n_skipped"]) == (32, 32, 0)
    assert rate["normalized_stats"]["ratio"] == 1.0
    assert rate["confidence_interval"]["method"] == "wilson"
    assert 0.89 < rate["confidence_interval"]["low"] < 0.90  # Wilson lower bound for 32/32

    samples = read_jsonl(run / "samples.jsonl")
    assert [s["sample_id"] for s in samples] == [f"gridworld-test-{i:05d}" for i in range(32)]
    for field in ("task_id", "sample_id", "benchmark", "split", "prediction", "success", "stop_reason", "steps",
                  "latency_seconds", "cost", "trace_run_dir", "run_spec_ref", "metadata"):
        assert field in samples[0]
    assert samples[0]["prediction"]["generated_video"]["shape"] == [16, 64, 64, 3]
    assert samples[0]["steps"] == 15
    assert len(read_jsonl(run / "metrics.jsonl")) == 10 * 32
    assert len(read_jsonl(run / "steps.jsonl")) == 32
    events = [e["event"] for e in read_jsonl(run / "events.jsonl")]
    assert events[0] == "run_started" and events[-2:] == ["run_finished", "report_written"]
    assert "gridworld.generated_rate" in proc.stdout  # the results table


def test_fvd_without_weights_lands_in_results_and_reports_no_number(tmp_path):
    proc = run_cli(["task=action_video", "metric=[fvd,artifact_count]", "metric.fvd.fetch=false",
                    f"metric.fvd.cache_dir={tmp_path / 'no_weights'}"], cwd=tmp_path)
    assert proc.returncode == 0, proc.stderr
    run = only_run_dir(tmp_path / "outputs" / "runs")
    results = json.loads((run / "results.json").read_text())["results"]
    assert set(results) == {"gridworld.fvd", "gridworld.artifact_count"}
    fvd = results["gridworld.fvd"]
    assert fvd["valid"] is False and fvd["n_valid"] == 0 and fvd["n_skipped"] == 32
    assert "value" not in fvd["diagnostics"]
    [(reason, count)] = fvd["skip_breakdown"].items()
    assert count == 32 and "I3D weights unavailable, no FVD" in reason
    assert results["gridworld.artifact_count"]["normalized_stats"]["mean"] == 1.0
