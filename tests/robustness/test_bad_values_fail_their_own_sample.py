"""One bad step aborts the run: any bad value from user code fails its own sample with a reason -- a
policy returning 2.7, -1, 99, a name, None or a bool never reaches the simulator's replay, and a
replay the simulator refuses fails that sample only; the other samples are scored exactly."""

from __future__ import annotations

import pytest

from tests.conftest import read_jsonl
from tests.robustness._run import wfeval

POLICY = "tests.robustness._models.BadActionPolicy"


@pytest.mark.parametrize("value, words", [("2.7", "2.7"), ("-1", "-1"), ("99", "99"), ("left", "left"),
                                          ("null", "None"), ("true", "True")])
def test_a_policy_returning_a_bad_action_fails_only_that_sample(monkeypatch, capsys, tmp_path, value, words):
    ran = wfeval(monkeypatch, capsys, tmp_path, "protocol=closed_loop", "policy=user", f"policy._target_={POLICY}",
                 f"+policy.value={value}", "metric=[generated_rate,psnr]")
    assert ran.code == 0, ran.err
    failed = [g for g in ran.generations() if g["status"] == "failed"]
    assert [g["sample_id"] for g in failed] == ["gridworld-test-00001"]
    assert "policy" in failed[0]["error"] and "step 0" in failed[0]["error"] and words in failed[0]["error"]
    psnr = ran.results["gridworld.psnr"]
    assert psnr["n_valid"] == 2 and psnr["n_total"] == 3 and psnr["diagnostics"]["value"] == 100.0
    assert "2/3 (67%)" in ran.table_line("gridworld.psnr")


def test_a_rollout_the_simulator_cannot_replay_fails_that_sample_with_the_reason():
    from wfeval.api import GenerationRequest, GenerationResult
    from wfeval.protocols.drivers import replay_references

    def simulate(request, actions):
        if request.sample_id == "bad":
            raise IndexError("only integer scalar arrays can be converted to a scalar index")
        raise AssertionError("not reached in this test")

    request = GenerationRequest(sample_id="bad", controls={"actions": [1]})
    result = GenerationResult(sample_id="bad", status="ok", metadata={"closed_loop": {"actions": [2.7]}})
    [(_, replayed)] = replay_references([(request, result)], store=None, simulate=simulate, key="closed_loop")
    assert replayed.status == "failed" and replayed.artifacts == {}
    assert "could not replay the closed_loop actions of sample 'bad'" in replayed.error
    assert "IndexError" in replayed.error


@pytest.mark.parametrize("value, words", [("nan", "values must be finite"), ("inf", "values must be finite"),
                                          ("abc", "str 'abc'"), ("1.5", "outside its declared range [0, 1]"),
                                          ("-0.25", "outside its declared range [0, 1]")])
def test_a_metric_returning_a_bad_value_fails_that_row_and_the_mean_stays_true(monkeypatch, capsys, tmp_path,
                                                                                value, words):
    ran = wfeval(monkeypatch, capsys, tmp_path, "metric=[bad_value]", f"metric.bad_value.value={value}",
                 searchpath=True)
    assert ran.code == 0, ran.err
    result = ran.results["gridworld.bad_value"]
    assert (result["n_valid"], result["n_total"]) == (2, 3) and result["diagnostics"]["value"] == 0.5
    [row] = [r for r in read_jsonl(ran.run_dir / "metrics.jsonl") if r["sample_id"] == "gridworld-test-00001"]
    assert row["diagnostics"]["status"] == "error" and words in row["skip_reason"]
    assert "metric 'bad_value' returned" in row["skip_reason"]
