"""Values from user code on the policy-evaluation protocol are checked (issue 32 items 5 and 7).

Before: a reward of the wrong length was cut to its last element, ``done="False"`` counted as true,
a NaN/inf reward counted as a good generation and one start's NaN erased ``policy_rank_correlation``
for every start; a policy's action of 2.7 crashed the run with a traceback when that policy was
listed first and was silently scored (ρ = 1) when listed second. Now a bad reward, done or action
fails its own sample with the reason, and the ranking is computed over the other starts.
"""

from __future__ import annotations

import math

import pytest

from tests.robustness._run import wfeval

COMMON = ("task=policy_evaluation", "metric=[policy_rank_correlation,return_error]")


def _failed(ran) -> dict[str, str]:
    return {g["request"]["sample_id"]: g["result"]["error"] for g in
            [__import__("json").loads(line) for line in (ran.run_dir / "generations.jsonl").read_text().splitlines()]
            if g["result"]["status"] == "failed"}


def _assert_only_sample_1_failed(ran, *words: str) -> None:
    assert ran.code == 0, ran.err[-2000:]
    failed = _failed(ran)
    assert list(failed) == ["gridworld-test-00001"], failed
    for word in words:
        assert word in failed["gridworld-test-00001"], failed
    agg = ran.results["gridworld.policy_rank_correlation"]
    assert agg["valid"] and agg["n_valid"] == 2 and agg["n_total"] == 3  # the other starts still rank
    assert math.isfinite(agg["diagnostics"]["value"])
    assert math.isfinite(ran.value("gridworld.return_error"))


@pytest.mark.parametrize("mode, words", [
    ("long", ["reward [5.0, 0.0, 0.0] for 1 action(s)", "one reward per action"]),
    ("done_str", ["done 'False' (str)", "done is True or False"]),
    ("nan_reward", ["non-finite reward ([nan])"]),
    ("inf_reward", ["non-finite reward ([inf])"]),
    ("text", ["reward '1' (str)", "a reward is a real number"]),
])
def test_a_bad_model_reward_or_done_fails_its_own_sample_only(monkeypatch, capsys, tmp_path, mode, words):
    ran = wfeval(monkeypatch, capsys, tmp_path, *COMMON, "model=python",
                 "model.object._target_=tests.robustness._models.BadRewardOracle", f"+model.object.mode={mode}")
    _assert_only_sample_1_failed(ran, "bad_reward.step returned", *words)


@pytest.mark.parametrize("order", [["policy", "shortest_path", "noop"], ["shortest_path", "policy", "noop"]])
def test_a_policy_action_outside_the_action_set_fails_its_own_sample_in_any_position(monkeypatch, capsys, tmp_path,
                                                                                     order):
    ran = wfeval(monkeypatch, capsys, tmp_path, *COMMON, "model=oracle", f"protocol.policies=[{','.join(order)}]",
                 "policy=user", "policy._target_=tests.robustness._models.BadActionPolicy", "+policy.value=2.7")
    _assert_only_sample_1_failed(ran, "policy 'policy' at step 0", "2.7")
