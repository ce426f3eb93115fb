"""The python and command adapters expose the step interface of user models: a python object
with only start/step runs open loop and autoregressive alike; a command step program (JSON lines)
gives the same videos as the batch program, and a crashing step program fails its sample with
the stderr tail."""

from __future__ import annotations

import json
import sys

import numpy as np

from tests.conftest import ROOT, compose, read_jsonl
from tests.protocols.test_protocol_runs import _run, _videos
from wfeval.models.protocol import has_step_interface
from wfeval.pipeline import build

STEP_PROGRAM = f"model.step_argv=[{sys.executable},{ROOT / 'examples/command_model/step_model.py'},--shift,'8']"
BATCH_PROGRAM = f"model.argv=[{sys.executable},{ROOT / 'examples/command_model/model.py'},'{{requests}}',--shift,'8']"


def test_a_python_object_with_only_the_step_interface_runs_open_loop_and_autoregressive(tmp_path):
    obj = ["model=python", "model.object._target_=wfeval_test_models.SteppingOnlyModel", "benchmark.num_samples=2",
           "metric=[psnr]"]
    assert has_step_interface(build.build_model(compose(obj)).model)
    assert not has_step_interface(build.build_model(compose(["model=python",
                                                             "model.object._target_=wfeval_test_models.RecordingModel"])).model)
    open_loop, stepped = _videos(_run(tmp_path, "ol", *obj)), _videos(_run(tmp_path, "ar", *obj, "protocol=autoregressive"))
    for sample, video in open_loop.items():
        assert video.shape == (16, 64, 64, 3)
        np.testing.assert_array_equal(np.roll(video[0], 15, axis=1), video[-1])
        np.testing.assert_array_equal(stepped[sample], video)


def test_a_command_step_program_matches_the_batch_program_and_drives_closed_loop(tmp_path):
    small = ["model=command", "benchmark.num_samples=2", "metric=[psnr,action_following]"]
    batch = _videos(_run(tmp_path, "batch", *small, BATCH_PROGRAM))
    stepped_run = _run(tmp_path, "steps", *small, "model.argv=null", STEP_PROGRAM, "protocol=autoregressive",
                       "protocol.chunk=3")
    for sample, video in _videos(stepped_run).items():
        np.testing.assert_array_equal(video, batch[sample])
    open_steps = _videos(_run(tmp_path, "open-steps", *small, "model.argv=null", STEP_PROGRAM))
    assert all(np.array_equal(open_steps[s], batch[s]) for s in batch)
    closed = _run(tmp_path, "closed", *small, "model.argv=null", STEP_PROGRAM, "protocol=closed_loop")
    assert all(r["result"]["status"] == "ok" for r in read_jsonl(closed / "generations.jsonl"))


def test_a_crashing_step_program_fails_its_samples_with_the_stderr_tail(tmp_path):
    crash = tmp_path / "crash.py"
    crash.write_text("import sys\nsys.stdin.readline()\nprint('no weights here', file=sys.stderr)\nsys.exit(3)\n")
    run = _run(tmp_path, "crash", "model=command", "model.argv=null", f"model.step_argv=[{sys.executable},{crash}]",
               "protocol=autoregressive", "benchmark.num_samples=2", "metric=[generated_rate]", "model.timeout_s=20")
    rows = read_jsonl(run / "generations.jsonl")
    assert [r["result"]["status"] for r in rows] == ["failed", "failed"]
    assert "exited (status 3)" in rows[0]["result"]["error"] and "no weights here" in rows[0]["result"]["error"]
    doc = json.loads((run / "results.json").read_text())
    assert doc["results"]["gridworld.generated_rate"]["normalized_stats"]["ratio"] == 0.0
