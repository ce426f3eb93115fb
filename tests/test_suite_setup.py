"""How the suite runs on several workers (tests/conftest.py): the order files are handed out in, the
workers' thread counts, and a crashed worker ending the run instead of hanging it."""

from __future__ import annotations

import os
import random
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import conftest


def _items(*nodeids: str) -> list:
    return [SimpleNamespace(nodeid=n) for n in nodeids]


def test_files_are_handed_out_longest_first_then_by_number_of_tests_each_files_tests_in_their_order(monkeypatch):
    monkeypatch.setattr(conftest, "LONGEST_FIRST", ("tests/slow_b.py", "tests/slow_a.py"))
    files = {"tests/few.py": 1, "tests/many.py": 3, "tests/also_few.py": 1, "tests/slow_a.py": 1, "tests/slow_b.py": 2}
    nodeids = [f"{f}::test_{i}" for f, n in files.items() for i in range(n)]
    expected = ["tests/slow_b.py::test_0", "tests/slow_b.py::test_1", "tests/slow_a.py::test_0",
                "tests/many.py::test_0", "tests/many.py::test_1", "tests/many.py::test_2",
                "tests/also_few.py::test_0", "tests/few.py::test_0"]
    for seed in range(5):  # whatever order the files were collected in: every worker hands out the same
        blocks = [[n for n in nodeids if n.startswith(f)] for f in files]
        random.Random(seed).shuffle(blocks)
        items = _items(*(n for block in blocks for n in block))
        items.sort(key=conftest.file_order(items))
        assert [i.nodeid for i in items] == expected


def test_the_longest_files_named_are_test_files_of_the_suite():
    assert conftest.LONGEST_FIRST
    for name in conftest.LONGEST_FIRST:
        assert (conftest.ROOT / name).is_file() and Path(name).name.startswith("test_"), name


def _controller_config(**option):
    defaults = dict(numprocesses=None, usepdb=False, collectonly=False, dist="no", loadscopereorder=True,
                    maxworkerrestart=None)
    return SimpleNamespace(option=SimpleNamespace(**{**defaults, **option}), args=["tests"],
                           invocation_params=SimpleNamespace(dir=conftest.ROOT),
                           pluginmanager=SimpleNamespace(hasplugin=lambda name: name == "xdist"))


def test_a_run_over_the_folder_uses_loadfile_in_the_workers_order_and_a_crashed_worker_ends_it(monkeypatch):
    monkeypatch.setenv("WFEVAL_TEST_WORKERS", "2")
    config = _controller_config()
    conftest.pytest_cmdline_main(config)
    assert (config.option.numprocesses, config.option.dist, config.option.loadscopereorder,
            config.option.maxworkerrestart) == (2, "loadfile", False, "0")
    chosen = _controller_config(maxworkerrestart="3")  # the caller's choice stands
    conftest.pytest_cmdline_main(chosen)
    assert chosen.option.maxworkerrestart == "3"
    monkeypatch.setenv("WFEVAL_TEST_WORKERS", "0")  # one process: xdist's options untouched
    single = _controller_config()
    conftest.pytest_cmdline_main(single)
    assert (single.option.numprocesses, single.option.dist, single.option.maxworkerrestart) == (None, "no", None)


@pytest.mark.skipif(not os.environ.get("PYTEST_XDIST_WORKER"), reason="the workers' setting: run under xdist")
def test_each_worker_runs_its_libraries_on_one_thread_each():
    import torch
    from threadpoolctl import threadpool_info

    chosen = {name: int(os.environ[name]) for name in conftest.ONE_THREAD_EACH}  # 1 unless the caller chose
    assert torch.get_num_threads() == chosen["OMP_NUM_THREADS"]
    assert {i["num_threads"] for i in threadpool_info() if i["internal_api"] == "openblas"} == {
        chosen["OPENBLAS_NUM_THREADS"]}
