"""docs/adding-a-model.md runs as written: a Python object, a program, a folder of videos."""

from __future__ import annotations

import json

from tests.benchmarks._doc_runner import run_doc
from tests.conftest import read_jsonl


def test_adding_a_model_page(tmp_path, monkeypatch):
    python_run, command_run, config_run, precomputed_run, step_run, step_program_run = run_doc(
        "adding-a-model.md", tmp_path, monkeypatch)
    manifest = json.loads((python_run / "manifest.json").read_text())
    assert manifest["model"]["name"] == "drift" and "source_sha256" in manifest["model"]["fingerprint"]
    assert len(read_jsonl(python_run / "samples.jsonl")) == 8
    for run in (command_run, config_run):
        results = json.loads((run / "results.json").read_text())["results"]
        rate = next(v for k, v in results.items() if k.endswith("generated_rate"))
        assert rate["normalized_stats"]["ratio"] == 1.0
    assert json.loads((config_run / "manifest.json").read_text())["model"]["name"] == "my_program"
    results = json.loads((precomputed_run / "results.json").read_text())["results"]
    assert results["gridworld_tiny.generated_rate"]["normalized_stats"]["ratio"] == 0.75
    stepped = json.loads((step_run / "results.json").read_text())
    assert stepped["protocol"]["name"] == "autoregressive" and "gridworld.step_latency" in stepped["results"]
    assert stepped["results"]["gridworld.generated_rate"]["normalized_stats"]["ratio"] == 1.0
    closed = json.loads((step_program_run / "results.json").read_text())
    assert closed["protocol"]["name"] == "closed_loop"
    assert closed["results"]["gridworld.generated_rate"]["normalized_stats"]["ratio"] == 1.0
