"""The decision ladder on the record: each measurement's rung in results.json, the highest rung a run
reaches in results.md and the leaderboard, and compare saying when two models differ only below a rung."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import pytest

from wfeval.api import GenerationRequest
from wfeval.metrics.basic import ArtifactCount
from wfeval.metrics.ladder import DEFAULT_RUNGS, RUNGS, rung_of
from wfeval.metrics.outcomes import scored
from wfeval.report.ladder import differ_only_below, reached
from wfeval.report.markdown import results_markdown
from wfeval.results import build_results
from wfeval.results.record import RunResults

RUN_V0 = Path(__file__).parent / "data" / "run_v0" / "results.json"


class Plans(ArtifactCount):
    """A made-up measure that declares its rung on its class (as a new metric does)."""

    name = "plans"
    rung = "L6"


def _document(metrics, values):
    manifest = {"run_id": "r", "config_hash": "c" * 64, "model": {"name": "m"},
                "benchmark": {"id": "b", "version": "1.0", "dataset_hash": "d" * 64}}
    requests = [GenerationRequest(sample_id=f"s{i}", split="test") for i in range(3)]
    rows = {m: [scored(r.sample_id, m, values[m]) for r in requests] for m in metrics}
    return build_results(manifest=manifest, metrics=metrics, per_metric=rows, requests=requests, rules={})[1]


def test_results_json_names_each_measurements_rung_declared_or_from_the_table():
    document = _document({"artifact_count": ArtifactCount(), "plans": Plans()}, {"artifact_count": 1, "plans": 2})
    written = json.loads(json.dumps(document.to_dict()))
    assert written["metrics"]["b.artifact_count"]["rung"] == "L0"  # the built-in table
    assert written["metrics"]["b.plans"]["rung"] == "L6"  # the class's own
    assert RunResults.from_dict(written).info("b.plans").rung == "L6"
    assert reached(document).rung == "L6" and reached(document).evidence == ["b.plans"]


def test_every_rung_is_named_and_the_tables_rungs_are_rungs():
    assert list(RUNGS) == [f"L{i}" for i in range(8)]
    assert set(DEFAULT_RUNGS.values()) <= set(RUNGS)
    assert rung_of("gridworld.psnr") == "L1" and rung_of("gridworld.goal_success") == "L6"
    assert rung_of("x.step_latency") is None  # a timing: evidence for no rung
    assert rung_of("imagined_probe_r2_k4", type("M", (), {"name": "imagined_probe_r2"})()) == "L3"
    with pytest.raises(ValueError, match="rung 'L9' is not one of L0"):
        rung_of("m", type("M", (), {"rung": "L9"})())


def test_an_old_results_json_without_rungs_reads_and_the_report_falls_back_to_the_table():
    old = RunResults.from_dict(json.loads(RUN_V0.read_text()))
    assert all(info.rung is None for info in old.metrics.values())
    top = reached(old)
    assert top.rung is not None and all(rung_of(m) == top.rung for m in top.evidence)
    assert "## Decision ladder" in results_markdown(old)


def test_results_md_shows_the_highest_rung_with_its_evidence():
    document = _document({"artifact_count": ArtifactCount(), "plans": Plans()}, {"artifact_count": 1, "plans": 2})
    text = results_markdown(document)
    assert "highest rung reached: **L6 planning success**, evidence: b.plans = 2" in text
    assert "| L0 visual plausibility | b.artifact_count |" in text


class _Diff:
    def __init__(self, measurement, significant):
        self.measurement, self.reason, self._significant = measurement, "", significant

    def verdict(self, alpha):
        return "A better" if self._significant else "not significant"


class _Entry:
    def __init__(self, document):
        self.document = document


def _comparison(significant: dict[str, bool]):
    document = _document({"artifact_count": ArtifactCount(), "plans": Plans()}, {"artifact_count": 1, "plans": 2})
    return type("C", (), {"a": _Entry(document), "b": _Entry(document), "label_a": "noisy", "label_b": "oracle",
                          "differences": [_Diff(m, s) for m, s in significant.items()]})()


def test_compare_says_when_two_models_differ_only_below_the_highest_rung_both_measured():
    line = differ_only_below(_comparison({"b.artifact_count": True, "b.plans": False}), 0.05)
    assert line == ("decision ladder: noisy and oracle differ only below L6 (planning success): their differences "
                    "(artifact_count; highest L0) do not show at L6 (plans)")
    assert differ_only_below(_comparison({"b.artifact_count": True, "b.plans": True}), 0.05) is None  # differ at L6
    assert differ_only_below(_comparison({"b.artifact_count": False, "b.plans": False}), 0.05) is None  # no difference


def test_comparisons_json_carries_the_ladder_line(tmp_path):
    from tests.conftest import compose
    from wfeval.pipeline.runner import run_from_config
    from wfeval.report.paired import compare_runs
    from wfeval.report.runs import load_entries

    for model in ("noisy", "oracle"):
        cfg = compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "benchmark.num_samples=8",
                       f"model={model}", "metric=[psnr,goal_success]", "task=goal_reaching", "run.report=false"])
        run_from_config(cfg, output_dir=tmp_path / model)
    a, b = (load_entries([tmp_path / m])[0] for m in ("noisy", "oracle"))
    found = compare_runs(a, b, label_a="noisy", label_b="oracle", n_resamples=1000).to_dict(0.05)
    assert [d["verdict"] for d in found["differences"]] == ["B better", "not significant"]  # B: the oracle
    assert found["ladder"] == ("decision ladder: noisy and oracle differ only below L6 (planning success): their "
                               "differences (psnr; highest L1) do not show at L6 (goal_success)")


def test_the_leaderboard_and_the_html_report_show_each_runs_highest_rung_with_its_evidence(tmp_path):
    from tests.conftest import compose
    from wfeval.pipeline.runner import run_from_config
    from wfeval.report.html import render
    from wfeval.report.html.load import load_runs
    from wfeval.report.leaderboard import leaderboard, render_csv, render_text
    from wfeval.report.runs import load_entries

    for model, metrics in (("oracle", "psnr,agent_position_error"), ("static", "psnr,flicker")):
        cfg = compose([f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "benchmark.num_samples=3",
                       f"model={model}", f"metric=[{metrics}]", "run.report=false"])
        run_from_config(cfg, output_dir=tmp_path / "runs" / model)
    entries = load_entries([tmp_path / "runs"])
    board = leaderboard(entries)
    text = render_text(board, 200)
    assert "L3 (agent_position_error)" in text and "L2 (flicker)" in text  # oracle measured L3, static only up to L2
    rows = list(csv.DictReader(io.StringIO(render_csv(board))))
    assert {r["model"]: r["gridworld.ladder"] for r in rows} == {"oracle": "L3", "static": "L2"}
    page = render(load_runs([tmp_path / "runs"]), "ladder")
    assert 'title="L3 physical and state consistency: gridworld.agent_position_error">L3' in page
