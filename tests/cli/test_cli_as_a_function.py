"""Every command is ``main(argv) -> int``, called in-process: it returns its exit status (a config error 2,
argparse's usage error 2, a sweep 0), raises a bug to its caller, and gives the caller's process back as
it found it (argv, folder, environment, path, logging, Hydra's global state), run after run."""

from __future__ import annotations

import json
import logging
import os
import sys
from pathlib import Path

import pytest

import wfeval


def _process() -> tuple:
    root = logging.getLogger()
    return list(root.handlers), root.level, list(sys.argv), os.getcwd(), dict(os.environ), list(sys.path)


def _hydra_is_clear() -> bool:
    from hydra.core.global_hydra import GlobalHydra
    from hydra.core.hydra_config import HydraConfig

    return not GlobalHydra.instance().is_initialized() and not HydraConfig.initialized()


def _small(tmp_path, *overrides: str) -> list[str]:
    return ["benchmark.num_samples=2", "run.progress=off", "run.report=false", f"run.store_dir={tmp_path / 'store'}",
            "metric=[psnr]", *overrides]


def test_runs_called_one_after_another_give_the_process_back_and_log_only_into_their_own_folder(tmp_path,
                                                                                                monkeypatch):
    from wfeval.cli.run import main
    from wfeval.pipeline import runner

    real = runner.run_from_config

    def logging_run(config, output_dir):
        logging.getLogger("wfeval.test").info("the job of %s", Path(output_dir).name)
        return real(config, output_dir=output_dir)

    monkeypatch.setattr(runner, "run_from_config", logging_run)
    before = _process()
    for name in ("first", "second"):
        assert main(_small(tmp_path, f"hydra.run.dir={tmp_path / name}")) == 0
        assert _process() == before and _hydra_is_clear()
    logging.getLogger("wfeval").warning("a line logged after both runs")
    logs = {name: (tmp_path / name / "run.log").read_text() for name in ("first", "second")}  # Hydra's job log
    assert "the job of first" in logs["first"] and "the job of second" in logs["second"]
    assert "second" not in logs["first"] and "after both runs" not in logs["first"] + logs["second"]
    manifest = json.loads((tmp_path / "second" / "manifest.json").read_text())
    program = str(Path(wfeval.__file__).parent / "__main__.py")  # as `python -m wfeval` records it
    assert manifest["argv"] == [program, *_small(tmp_path, f"hydra.run.dir={tmp_path / 'second'}")]


def test_a_sweep_runs_every_job_in_process_and_returns_0(tmp_path, capsys):
    from wfeval.cli.run import main

    before = _process()
    assert main(["-m", *_small(tmp_path, f"hydra.sweep.dir={tmp_path / 'sweep'}"), "model=oracle,static"]) == 0
    assert _process() == before and _hydra_is_clear()
    assert sorted(p.name for p in (tmp_path / "sweep").iterdir() if p.is_dir()) == ["0_oracle", "1_static"]
    assert "2 jobs: 2 completed, 0 failed" in capsys.readouterr().out


def test_a_config_error_and_a_usage_error_are_returned_not_raised(tmp_path, capsys):
    from wfeval.cli.compare import main as compare
    from wfeval.cli.run import main

    assert main(["metric=[fvdd]"]) == 2
    assert "Unknown metric 'fvdd'" in capsys.readouterr().err
    assert compare([]) == 2
    assert "error: the following arguments are required: PATH" in capsys.readouterr().err
    assert _hydra_is_clear()


def test_a_bug_is_raised_to_the_caller_with_the_process_given_back(tmp_path, monkeypatch):
    from wfeval.cli.run import main
    from wfeval.pipeline import runner

    def broken(*args, **kwargs):
        raise RuntimeError("a bug in the pipeline")

    monkeypatch.setattr(runner, "run_from_config", broken)
    before = _process()
    with pytest.raises(RuntimeError, match="a bug in the pipeline"):
        main(_small(tmp_path, f"hydra.run.dir={tmp_path / 'run'}"))
    assert _process() == before and _hydra_is_clear()
