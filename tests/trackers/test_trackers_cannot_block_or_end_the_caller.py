"""A tracker never blocks, ends or loses an evaluation from Python (issue 46, item 11): an MLflow
server that does not answer (a closed port on 127.0.0.1: MLflow retries for minutes) holds the call
only for the tracker's deadline, a tracker calling ``sys.exit`` does not end the caller's script; both
are a RuntimeWarning and a ``tracker_failed`` event, with the results written and returned."""

from __future__ import annotations

import json
import socket
import sys
import time

import pytest
import wfeval_test_live

import wfeval

OVERRIDES = ["benchmark.num_samples=2", "run.progress=off"]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]  # closed when the socket is: connections to it are refused


def _events(run_dir, kind):
    rows = [json.loads(line) for line in (run_dir / "events.jsonl").read_text().splitlines()]
    return [row for row in rows if row["event"] == kind]


def _psnr(run_dir) -> float:
    return json.loads((run_dir / "results.json").read_text())["results"]["gridworld.psnr"]["diagnostics"]["value"]


def test_an_unreachable_mlflow_server_holds_the_call_only_for_the_trackers_deadline(tmp_path):
    pytest.importorskip("mlflow")
    from wfeval.trackers.mlflow_tracker import MLflowTracker

    tracker = MLflowTracker(tracking_uri=f"http://127.0.0.1:{_closed_port()}")
    tracker.timeout_s = 3.0
    store = f"run.store_dir={tmp_path / 'store'}"
    started = time.monotonic()
    with pytest.warns(RuntimeWarning, match=r"wfeval: tracker mlflow could not log .* at step 5: not finished within "
                                            r"its deadline of 3 s"):
        results = wfeval.evaluate(model=wfeval_test_live.ShiftNet(offset=3.0), metrics=["psnr"], tracker=tracker,
                                  step=5, run_dir=tmp_path / "a", overrides=[*OVERRIDES, store])
    assert time.monotonic() - started < 60  # MLflow alone retries for ~259 s
    assert results["gridworld.psnr"].value == _psnr(tmp_path / "a") > 0  # the results, written and returned
    (event,) = _events(tmp_path / "a", "tracker_failed")
    assert event["tracker"] == "mlflow" and event["step"] == 5 and "deadline of 3 s" in event["error"]

    started = time.monotonic()  # the next evaluation: not queued behind the call still retrying
    with pytest.warns(RuntimeWarning, match="its call for an earlier evaluation is still running"):
        again = wfeval.evaluate(model=wfeval_test_live.ShiftNet(offset=3.0), metrics=["psnr"], tracker=tracker,
                                step=6, run_dir=tmp_path / "b", overrides=[*OVERRIDES, store])
    assert time.monotonic() - started < 30
    assert again["gridworld.psnr"].value == results["gridworld.psnr"].value
    assert _events(tmp_path / "b", "tracker_failed")[0]["step"] == 6


class Exits:
    """A tracker whose logging calls sys.exit(0), as a careless script's helper might."""

    name = "exits"

    def log_step(self, run_dir, step):
        sys.exit(0)


class Raises:
    name = "raises"

    def log_step(self, run_dir, step):
        raise OSError("No space left on device")


def test_a_tracker_calling_sys_exit_or_raising_is_a_warning_and_the_caller_goes_on(tmp_path):
    with pytest.warns(RuntimeWarning) as caught:
        results = wfeval.evaluate(model=wfeval_test_live.ShiftNet(offset=3.0), metrics=["psnr"],
                                  tracker=[Exits(), Raises()], step=0, run_dir=tmp_path / "run",
                                  overrides=[*OVERRIDES, f"run.store_dir={tmp_path / 'store'}"])
    said = [str(w.message) for w in caught if "wfeval: tracker" in str(w.message)]
    assert len(said) == 2
    assert "tracker exits could not log" in said[0] and "SystemExit(0)" in said[0]
    assert "tracker raises could not log" in said[1] and "OSError: No space left on device" in said[1]
    assert results["gridworld.psnr"].value == _psnr(tmp_path / "run")
    assert [(e["tracker"], e["step"]) for e in _events(tmp_path / "run", "tracker_failed")] == [("exits", 0),
                                                                                              ("raises", 0)]
