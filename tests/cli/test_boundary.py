"""The command's boundary reads Hydra's flags itself and expands a basic sweep as Hydra does."""

from __future__ import annotations

from wfeval.cli.boundary import builds_nothing, command_args, job_override_lists


def test_a_sweep_expands_to_every_job_in_the_basic_sweepers_order():
    jobs = job_override_lists(["model=oracle,static", "run.seed=1", "benchmark.num_samples=2,4"], multirun=True)
    assert jobs == [["model=oracle", "run.seed=1", "benchmark.num_samples=2"],
                    ["model=oracle", "run.seed=1", "benchmark.num_samples=4"],
                    ["model=static", "run.seed=1", "benchmark.num_samples=2"],
                    ["model=static", "run.seed=1", "benchmark.num_samples=4"]]
    assert job_override_lists(["model=oracle"], multirun=False) == [["model=oracle"]]


def test_commands_that_print_build_nothing_and_runs_do():
    for argv in (["--help"], ["-h"], ["--cfg", "job"], ["-c", "hydra"], ["--info"], ["--hydra-help"], ["-sc"]):
        assert builds_nothing(command_args(argv)), argv
    args = command_args(["-m", "model=oracle,static", "run.trust=[my_pkg.]"])
    assert not builds_nothing(args) and args.multirun and args.overrides == ["model=oracle,static", "run.trust=[my_pkg.]"]
