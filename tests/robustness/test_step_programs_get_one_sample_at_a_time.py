"""A step program gets one sample per ``start`` (issue 32 item 9): the planner batched samples, so the
shipped ``examples/command_model/step_model.py`` (which forgets older states at each start, as
wfeval/models/command_steps.py allows) failed 2 of 3 goal-reaching samples with ``KeyError 's1'``
and the model was blamed. Now every driver finishes one sample before starting the next for a model
that says ``one_sample_at_a_time`` (``model=command`` with ``step_argv``); other models still plan
their samples side by side."""

from __future__ import annotations

import sys

from tests.conftest import ROOT
from tests.robustness._run import wfeval
from wfeval.models.protocol import one_sample_at_a_time

STEP_PROGRAM = f"model.step_argv=[{sys.executable},{ROOT / 'examples/command_model/step_model.py'},--shift,'8']"


def test_the_shipped_step_program_reaches_every_goal_with_the_default_batch(monkeypatch, capsys, tmp_path):
    ran = wfeval(monkeypatch, capsys, tmp_path, "task=goal_reaching", "model=command", "model.argv=null", STEP_PROGRAM,
                 "metric=[goal_success]", samples=3)
    assert ran.code == 0, ran.err[-2000:]
    assert [g["status"] for g in ran.generations()] == ["ok", "ok", "ok"]
    assert "KeyError" not in ran.out + ran.err
    success = ran.results["gridworld.goal_success"]
    assert (success["n_valid"], success["n_total"]) == (3, 3)


def test_only_a_model_that_says_so_is_driven_one_sample_at_a_time():
    class Program:
        one_sample_at_a_time = True

    class Adapter:
        def __init__(self, inner):
            self.object = inner

    class Driver:
        def __init__(self, inner):
            self.model = inner

    assert one_sample_at_a_time(Driver(Adapter(Program())))
    assert not one_sample_at_a_time(Driver(Adapter(object())))
    loop = Driver(None)
    loop.model = loop  # a cycle ends
    assert not one_sample_at_a_time(loop)
