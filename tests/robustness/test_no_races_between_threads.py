"""No races between the overlapped scoring thread and the model (issue 32 item 16, issue 37 item 4).

Before: on a loaded machine a sweep's first job ``model=learned`` failed with ``setup() failed:
AttributeError: partially initialized module 'torch' has no attribute 'cuda'``: the scoring thread
(FVD's reference features) and the model's ``setup()`` imported torch at the same time. Now the
scoring thread starts after the model's setup, once the modules its metrics need are imported on
the main thread (after the first samples, when they are not imported yet: issue 37 item 1); and
scoring never changes process-wide settings (torch and BLAS thread counts) under a model
generating in the same process. The 20-sweeps-beside-a-CPU-burner stress test is
``perf/thread_race_stress.py`` (not in the default suite).
"""

from __future__ import annotations

import sys
import threading
import time

import numpy as np
import pytest
import torch

import wfeval
from wfeval.models.base import actions_of, initial_frame
from wfeval.pipeline.overlap import import_before_threads


def _scoring_threads() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("wfeval-score")]


class SlowSetup:
    """Waits in setup() (as a model loading its weights and importing torch does) and records whether
    a scoring thread was alive meanwhile; generates the still initial frame, off the CPU (sleeps)."""

    name = "slow_setup"

    def __init__(self):
        self.during_setup: list[list[str]] = []
        self.during_generate: list[list[str]] = []

    def setup(self):
        self.during_setup.append(_scoring_threads())
        time.sleep(0.05)
        self.during_setup.append(_scoring_threads())

    def generate(self, requests):
        time.sleep(0.02)
        self.during_generate.append(_scoring_threads())
        return [{"generated_video": np.repeat(initial_frame(r)[None], len(actions_of(r)) + 1, axis=0)}
                for r in requests]


@pytest.fixture(autouse=True)
def in_tmp(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)


def test_the_scoring_thread_never_runs_beside_the_models_setup(tmp_path):
    for attempt in range(6):  # started at once, many times
        model = SlowSetup()
        results = wfeval.evaluate(model=model, metrics=["psnr", "flicker"], model_version=attempt,
                                  overrides=["benchmark.num_samples=16", "run.batch_size=4", "run.overlap=true",
                                             f"run.store_dir={tmp_path / 'store'}"], run_dir=tmp_path / f"r{attempt}")
        assert model.during_setup == [[], []]  # no scoring thread while setup() ran
        assert any(model.during_generate)  # ... and one beside generation: the runs did overlap
        assert results["gridworld.psnr"].n_valid == 16


def test_modules_the_metrics_need_are_imported_on_the_calling_thread(tmp_path, monkeypatch):
    module = tmp_path / "wfeval_test_slow_heavy_module.py"
    module.write_text("import threading, time\nIMPORTED_ON = threading.current_thread().name\ntime.sleep(0.05)\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "wfeval_test_slow_heavy_module", raising=False)

    class DeclaresImports:
        device = "numpy"
        imports = ("wfeval_test_slow_heavy_module",)

    class OnTorch:
        device = "auto"

    done = import_before_threads({"a": DeclaresImports(), "b": OnTorch()})
    assert "wfeval_test_slow_heavy_module" in done  # torch: already imported by this test module
    assert sys.modules["wfeval_test_slow_heavy_module"].IMPORTED_ON == threading.current_thread().name
    assert import_before_threads({"psnr_on_numpy": DeclaresImports()}) == []  # once


class SeesTheLateModule:
    """Generates the still initial frame; records, per batch, whether ``wfeval_test_late_module`` was imported."""

    name = "sees_the_late_module"

    def __init__(self):
        self.imported: list[bool] = []

    def generate(self, requests):
        self.imported.append("wfeval_test_late_module" in sys.modules)
        return [{"generated_video": np.repeat(initial_frame(r)[None], len(actions_of(r)) + 1, axis=0)}
                for r in requests]


def test_the_first_samples_do_not_wait_for_the_metrics_imports(tmp_path, monkeypatch):
    """A module the metrics need that is not imported yet (torch, for a model without it) is imported
    after the first unit of samples is generated, on the main thread, before the scoring thread starts;
    the references are still prepared on that thread, and the run scores every sample."""
    from wfeval.metrics.reference import PSNR

    module = tmp_path / "wfeval_test_late_module.py"
    module.write_text("import threading\nIMPORTED_ON = threading.current_thread().name\n"
                      "SCORERS = [t.name for t in threading.enumerate() if t.name.startswith('wfeval-score')]\n")
    monkeypatch.syspath_prepend(str(tmp_path))
    monkeypatch.delitem(sys.modules, "wfeval_test_late_module", raising=False)
    monkeypatch.setattr(PSNR, "imports", ("wfeval_test_late_module",), raising=False)
    prepared = []
    monkeypatch.setattr(PSNR, "prepare_references", lambda self, requests: prepared.append(
        (threading.current_thread().name, len(list(requests)))), raising=False)
    model = SeesTheLateModule()
    results = wfeval.evaluate(model=model, metrics=["psnr"], model_version=1,
                              overrides=["benchmark.num_samples=24", "run.batch_size=8", "run.overlap=true",
                                         f"run.store_dir={tmp_path / 'store'}"], run_dir=tmp_path / "run")
    assert model.imported == [False, True, True]  # the first batch did not wait for it
    late = sys.modules["wfeval_test_late_module"]
    assert (late.IMPORTED_ON, late.SCORERS) == (threading.current_thread().name, [])  # main thread, no scorer yet
    assert prepared == [("wfeval-score_0", 24)] and results["gridworld.psnr"].n_valid == 24


class ThreadWatcher:
    """Records torch's and the BLAS libraries' thread settings at every generate call, waiting off the
    CPU (as on a GPU) so that scoring runs beside it."""

    name = "thread_watcher"

    def __init__(self):
        self.seen: list[tuple] = []

    def generate(self, requests):
        from threadpoolctl import threadpool_info

        for _ in requests:
            time.sleep(0.01)
            self.seen.append((torch.get_num_threads(), torch.get_num_interop_threads(),
                              tuple(sorted((i["internal_api"], i["num_threads"]) for i in threadpool_info()))))
        return [{"generated_video": np.repeat(initial_frame(r)[None], len(actions_of(r)) + 1, axis=0)}
                for r in requests]


def test_scoring_never_changes_thread_settings_under_a_generating_model(tmp_path):
    """The caller chose 2 threads for torch and for every BLAS library (the suite's workers run with 1:
    tests/conftest.py), so that a change to 1 or to the machine's count would show."""
    from threadpoolctl import threadpool_info, threadpool_limits

    threads = torch.get_num_threads()
    torch.set_num_threads(2)
    try:
        with threadpool_limits(limits=2):
            caller = (2, torch.get_num_interop_threads(),
                      tuple(sorted((i["internal_api"], i["num_threads"]) for i in threadpool_info())))
            assert all(n == 2 for _, n in caller[2])
            model = ThreadWatcher()
            results = wfeval.evaluate(model=model, metrics=["psnr", "ssim", "flicker", "lpips"], model_version=1,
                                      overrides=["benchmark.num_samples=24", "run.batch_size=4", "run.overlap=true",
                                                 f"run.store_dir={tmp_path / 'store'}"])
            after = tuple(sorted((i["internal_api"], i["num_threads"]) for i in threadpool_info()))
        assert len(model.seen) == 24 and results["gridworld.flicker"].n_valid == 24
        assert set(model.seen) == {caller}  # at every step: the caller's settings
        assert (torch.get_num_threads(), torch.get_num_interop_threads(), after) == caller
    finally:
        torch.set_num_threads(threads)
