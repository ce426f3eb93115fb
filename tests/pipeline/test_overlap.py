"""run.overlap: the samples already generated are scored on a thread while the model generates the next
ones; the results are those of a run that scores after generating."""

from __future__ import annotations

import json
import threading
import time

import numpy as np
import pytest
import wfeval_test_plugins

import wfeval
from tests.conftest import compose, read_jsonl
from wfeval.metrics.reference import PSNR
from wfeval.models.base import actions_of, initial_frame
from wfeval.pipeline import overlap as side_by_side
from wfeval.pipeline import spool
from wfeval.pipeline.runner import run_from_config


def _document(run_dir):
    data = json.loads((run_dir / "results.json").read_text())
    data["run_id"] = "-"
    return json.dumps(data, indent=2, sort_keys=True)


def _without_times(node):
    if isinstance(node, dict):
        return {k: _without_times(v) for k, v in node.items() if k not in ("trace_run_dir", "latency_seconds", "traceback")}
    return [_without_times(v) for v in node] if isinstance(node, list) else node


def _rows(run_dir, name):
    return sorted(json.dumps(_without_times(r), sort_keys=True) for r in read_jsonl(run_dir / name))


@pytest.mark.parametrize("chunk", [7, 256])
def test_results_rows_and_samples_are_those_of_a_run_without_overlap(tmp_path, monkeypatch, chunk):
    monkeypatch.setattr(spool, "CHUNK", chunk)
    monkeypatch.setattr(wfeval_test_plugins.FrameCount, "aggregate",
                        lambda self, results: __import__("wfeval.metrics.base", fromlist=["x"]).default_aggregate(
                            self.name, list(results)))
    common = [f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false",
              "benchmark.num_samples=21", "model=flaky_oracle", "model.fail_on=[2,9]", "run.batch_size=3",
              "metric=[generated_rate,psnr,ssim,flicker,frame_count,action_following]",
              "metric.frame_count.raise_on=[4]", "metric.flicker.on_failure=worst", "benchmark.group_by=[split]"]
    for overlap in (False, True):
        run_from_config(compose([*common, f"run.overlap={overlap}"], searchpath=True), tmp_path / str(overlap))
    assert _document(tmp_path / "True") == _document(tmp_path / "False")
    for name in ("metrics.jsonl", "samples.jsonl", "generations.jsonl"):
        assert _rows(tmp_path / "True", name) == _rows(tmp_path / "False", name)
    events = {e["event"] + e.get("phase", ""): e for e in read_jsonl(tmp_path / "True" / "events.jsonl")}
    assert events["phase_startedscore"]["overlapped"] is True
    assert events["phase_finishedscore"]["busy_seconds"] > 0
    assert "overlapped" not in {k for e in read_jsonl(tmp_path / "False" / "events.jsonl") for k in e}
    assert not list((tmp_path / "True").glob(".*.partial"))


def test_units_are_whole_scoring_blocks_that_divide_the_chunk():
    assert [side_by_side.overlap_unit(b, 256) for b in (1, 8, 9, 20, 100, 300)] == [8, 8, 16, 32, 128, 256]
    assert (side_by_side.overlap_unit(8, 7), side_by_side.overlap_unit(3, 24), side_by_side.overlap_unit(8, 1)) == (7, 8, 1)


def _still(requests):
    """Each sample's initial frame held for its actions: what these stand-in models generate."""
    return [{"generated_video": np.repeat(initial_frame(r)[None], len(actions_of(r)) + 1, axis=0)} for r in requests]


def _waited_for(items: list, seconds: float = 30) -> bool:
    """Wait (off the CPU, without the GIL) until ``items`` is not empty; whether it came in time."""
    deadline = time.monotonic() + seconds
    while not items and time.monotonic() < deadline:
        time.sleep(0.01)
    return bool(items)


class WaitsForScoring:
    """Generates batch after batch; its last batch waits (without the GIL) until a sample has been scored."""

    name = "waits_for_scoring"

    def __init__(self, scored: list, batches: int):
        self.scored, self.batches, self.calls, self.saw_scoring = scored, batches, 0, None

    def fingerprint(self):
        return {"test": "overlap"}

    def generate(self, requests):
        self.calls += 1
        if self.calls == self.batches:
            self.saw_scoring = _waited_for(self.scored)
        return _still(requests)


def test_the_first_samples_are_scored_while_the_model_still_generates(tmp_path, monkeypatch):
    scored: list[str] = []
    real = PSNR.compute_sample

    def recording(self, request, result):
        scored.append(threading.current_thread().name)
        return real(self, request, result)

    monkeypatch.setattr(PSNR, "compute_sample", recording)
    model = WaitsForScoring(scored, batches=3)
    wfeval.evaluate(model=model, metrics=["psnr"], overrides=["benchmark.num_samples=24", "run.batch_size=8",
                                                               "run.overlap=true", f"run.store_dir={tmp_path / 'store'}"],
                    run_dir=tmp_path / "run")
    assert model.saw_scoring is True  # batch 1 was scored before batch 3 was generated
    assert set(scored) == {"wfeval-score_0"}
    model, scored[:] = WaitsForScoring(scored, batches=3), []
    monkeypatch.setattr(time, "monotonic", lambda: float("inf"))  # sequential: do not wait for what cannot come
    wfeval.evaluate(model=model, metrics=["psnr"], overrides=["benchmark.num_samples=24", "run.batch_size=8",
                                                               "run.overlap=false", f"run.store_dir={tmp_path / 's2'}"],
                    run_dir=tmp_path / "sequential")
    assert model.saw_scoring is False


def test_a_failing_generation_stops_the_scoring_thread_and_the_run_ends_as_without_overlap(tmp_path):
    from wfeval.pipeline.generate import GenerationStopped

    overrides = [f"run.store_dir={tmp_path / 'store'}", "run.progress=off", "run.report=false",
                 "benchmark.num_samples=40", "model=flaky_oracle", "model.fail_on=[30]", "run.batch_size=4",
                 "run.fail_on_error=true", "metric=[psnr,ssim]"]
    with pytest.raises(GenerationStopped):
        run_from_config(compose(overrides, searchpath=True), tmp_path / "run")
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "failed"
    assert not (tmp_path / "run" / "results.json").exists()
    assert not [t for t in threading.enumerate() if t.name.startswith("wfeval-score")]


class WaitsForReferences:
    """Its first batch waits (without the GIL) until the references have been prepared."""

    name = "waits_for_references"

    def __init__(self, prepared: list):
        self.prepared, self.saw_prepared = prepared, None

    def fingerprint(self):
        return {"test": "overlap-references"}

    def generate(self, requests):
        if self.saw_prepared is None:
            self.saw_prepared = _waited_for(self.prepared)
        return _still(requests)


def test_what_needs_only_the_references_is_prepared_before_the_first_sample_is_generated(tmp_path, monkeypatch):
    """A metric's prepare_references (FVD: the reference videos' features) runs on the scoring
    thread as generation starts, over every sample's request; not for references that are replayed
    after generation (closed loop), and not in a run that scores after generating."""
    prepared: list[tuple[str, list[str]]] = []

    def prepare_references(self, requests):
        prepared.append((threading.current_thread().name, [r.references["video"].sha256 for r in requests]))

    monkeypatch.setattr(PSNR, "prepare_references", prepare_references, raising=False)
    model = WaitsForReferences(prepared)
    common = ["benchmark.num_samples=24", "run.batch_size=8", "run.progress=off", "run.report=false"]
    wfeval.evaluate(model=model, metrics=["psnr"], overrides=[*common, f"run.store_dir={tmp_path / 'store'}"],
                    run_dir=tmp_path / "run")
    assert model.saw_prepared is True
    [(thread, shas)] = prepared
    records = read_jsonl(tmp_path / "run" / "generations.jsonl")
    assert thread == "wfeval-score_0"
    assert shas == [r["request"]["references"]["video"]["sha256"] for r in records] and len(shas) == 24
    prepared.clear()
    monkeypatch.setattr(time, "monotonic", lambda: float("inf"))  # do not wait for what does not come
    wfeval.evaluate(model=WaitsForReferences(prepared), metrics=["psnr"],
                    overrides=[*common, "run.overlap=false", f"run.store_dir={tmp_path / 's2'}"],
                    run_dir=tmp_path / "sequential")
    run_from_config(compose([*common, "metric=[psnr]", "protocol=closed_loop", "policy=random",
                             f"run.store_dir={tmp_path / 's3'}"]), tmp_path / "closed_loop")
    assert prepared == []


class Busy:
    """Keeps the generating thread on the CPU (pure Python) for ``seconds`` per batch."""

    name = "busy"

    def __init__(self, seconds: float, scored: list):
        self.seconds, self.scored, self.scored_before_last = seconds, scored, None
        self.calls = 0

    def fingerprint(self):
        return {"test": "overlap-auto-busy"}

    def generate(self, requests):
        self.calls += 1
        end = time.thread_time() + self.seconds
        while time.thread_time() < end:
            sum(range(1000))
        if self.calls == 4:
            self.scored_before_last = len(self.scored)
        return _still(requests)


class Waiting(Busy):
    """Waits (off the CPU, as on a GPU) for ``seconds`` per batch."""

    def generate(self, requests):
        time.sleep(self.seconds)
        self.calls += 1
        if self.calls == 4:
            self.scored_before_last = len(self.scored)
        return _still(requests)


@pytest.mark.parametrize("model_class, overlaps", [(Waiting, True), (Busy, False)])
def test_auto_overlaps_a_model_that_waits_and_scores_a_busy_one_after(tmp_path, monkeypatch, model_class, overlaps):
    """run.overlap=auto (the default) times the model's second batch: a model off the CPU (a GPU, a
    process) is overlapped; one that keeps the CPU busy is scored after generating. The same results."""
    scored: list[str] = []
    real = PSNR.compute_sample

    def recording(self, request, result):
        scored.append(request.sample_id)
        return real(self, request, result)

    monkeypatch.setattr(PSNR, "compute_sample", recording)
    model = model_class(0.3, scored)
    common = ["benchmark.num_samples=32", "run.batch_size=8", "run.progress=off"]
    auto = wfeval.evaluate(model=model, metrics=["psnr"], overrides=[*common, f"run.store_dir={tmp_path / 'a'}"],
                           run_dir=tmp_path / "auto")
    assert (model.scored_before_last > 0) is overlaps  # units 1-2 scored while batch 4 was generated, or none
    finished = [e for e in read_jsonl(tmp_path / "auto" / "events.jsonl")
                if e["event"] == "phase_finished" and e.get("phase") == "score"][0]
    choice = finished["overlap_choice"]
    assert finished["overlapped"] is overlaps and choice["mode"] == "auto" and choice["overlapped"] is overlaps
    assert (choice["cpu_fraction"] < 0.5) is overlaps and choice["unit_seconds"] >= 0.3
    off = wfeval.evaluate(model=model_class(0.0, []), metrics=["psnr"],
                          overrides=[*common, "run.overlap=false", f"run.store_dir={tmp_path / 'b'}"],
                          run_dir=tmp_path / "off")
    assert auto["gridworld.psnr"].value == off["gridworld.psnr"].value
    assert _rows(tmp_path / "auto", "metrics.jsonl") == _rows(tmp_path / "off", "metrics.jsonl")


def test_an_unknown_overlap_mode_is_a_config_error_naming_the_key(tmp_path):
    from tests.conftest import run_cli

    proc = run_cli(["run.overlap=maybe", f"run.store_dir={tmp_path / 'store'}"], cwd=tmp_path)
    assert proc.returncode == 2
    assert "run.overlap must be true, false or auto; got 'maybe'" in proc.stderr
    assert "Traceback" not in proc.stderr


@pytest.mark.parametrize("cpu, waited_for_cpu, overlaps", [
    (0.2, 0.0, True),  # off the CPU for 80% of the unit (a GPU, a process): overlapped
    (0.2, 0.78, False),  # on the CPU whenever it could run: a busy model on a loaded machine, scored after
    (0.9, 0.0, False),  # busy on a quiet machine
])
def test_auto_does_not_count_time_spent_waiting_for_a_core_as_waiting(monkeypatch, cpu, waited_for_cpu, overlaps):
    """Beside other work (a second evaluation) a busy model's thread runs a fraction of the wall time;
    the run-queue delay the kernel reports is left out of the unit's time before the CPU fraction is taken."""
    ticks = iter([(10.0, 1.0, 5.0), (11.0, 1.0 + cpu, 5.0 + waited_for_cpu)])  # (wall, thread CPU, waited)
    choice = side_by_side.OverlapChoice("auto")
    monkeypatch.setattr(choice, "clock", lambda: next(ticks))
    assert choice.after_unit() is None
    assert choice.after_unit() is overlaps
    assert choice.measured["waited_for_cpu_seconds"] == waited_for_cpu and choice.measured["unit_seconds"] == 1.0


def test_the_kernels_run_queue_delay_is_read_for_the_calling_thread():
    wall, cpu, waited = side_by_side.thread_clock()
    assert wall > 0 and cpu >= 0 and waited >= 0
    end = time.thread_time() + 0.02
    while time.thread_time() < end:
        pass
    later = side_by_side.thread_clock()
    assert later[1] - cpu >= 0.02 and later[2] >= waited
