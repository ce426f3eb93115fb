"""Config mistakes exit 2 with one readable paragraph; HYDRA_FULL_ERROR=1 shows the trace."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.conftest import cli_env, run_cli

CONF = Path(__file__).resolve().parents[2] / "conf"


def _options(group: str) -> list[str]:
    """The built-in options of a config group, as the error lists them (sorted file names)."""
    return sorted(p.stem for p in (CONF / group).glob("*.yaml"))


def test_unknown_metric_exits_2_with_did_you_mean_and_no_traceback(tmp_path):
    proc = run_cli(["metric=[fvdd]"], cwd=tmp_path)
    assert proc.returncode == 2
    listed = ", ".join(_options("metric"))  # every built-in metric config, in order
    assert f"Unknown metric 'fvdd'. Did you mean: fvd? Available: {listed}." in proc.stderr
    assert listed.startswith("action_following, action_sensitivity") and "fvd, generated_rate" in listed
    assert "Traceback" not in proc.stderr
    assert not (tmp_path / "outputs").exists() or not any((tmp_path / "outputs").rglob("results.json"))


def test_unknown_model_lists_the_available_models(tmp_path):
    proc = run_cli(["model=oracel"], cwd=tmp_path)
    assert proc.returncode == 2
    listed = ", ".join(_options("model"))
    assert f"Unknown model 'oracel'. Did you mean: oracle, game_oracle, state_oracle? Available: {listed}." in proc.stderr
    assert listed.startswith("blur, command, ensemble_noisy, exploitable, forgetful, game_oracle")


def test_key_typo_exits_2_naming_the_full_key_and_the_fix(tmp_path):
    proc = run_cli(["benchmark.num_sample=3"], cwd=tmp_path)
    assert proc.returncode == 2
    assert "full_key: benchmark.num_sample" in proc.stderr
    assert "Did you mean: num_samples" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_wrong_type_exits_2(tmp_path):
    proc = run_cli(["benchmark.num_samples=many"], cwd=tmp_path)
    assert proc.returncode == 2
    assert "full_key: benchmark.num_samples" in proc.stderr


def test_bad_value_found_when_building_exits_2_naming_the_key(tmp_path):
    proc = run_cli(["benchmark.split=train", "run.progress=off"], cwd=tmp_path)
    assert proc.returncode == 2
    assert "benchmark" in proc.stderr and "'train' is not one of benchmark.splits" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_hydra_full_error_shows_the_traceback(tmp_path):
    proc = run_cli(["metric=[fvdd]"], cwd=tmp_path, env=cli_env(HYDRA_FULL_ERROR="1"))
    assert proc.returncode != 0
    assert "Traceback" in proc.stderr
    assert "Unknown metric 'fvdd'" in proc.stderr


@pytest.mark.subprocess  # an import-laziness probe
def test_help_and_cfg_job_do_not_import_torch_or_av(tmp_path):
    probe = (
        "import atexit, sys, runpy\n"
        "atexit.register(lambda: print('HEAVY', sorted(m for m in ('torch', 'av') if m in sys.modules)))\n"
        "sys.argv = ['wfeval'] + sys.argv[1:]\n"
        "runpy.run_module('wfeval', run_name='__main__')\n"
    )
    import subprocess
    import sys

    for args in (["--help"], ["--cfg", "job"]):
        proc = subprocess.run([sys.executable, "-c", probe, *args], cwd=tmp_path, env=cli_env(),
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "HEAVY []" in proc.stdout, proc.stdout[-500:]
    assert "metric:" in proc.stdout and "generated_rate:" in proc.stdout


def test_a_run_stopped_by_its_failure_policy_exits_1_with_the_reason_and_no_traceback(tmp_path):
    from tests.conftest import SUPPORT_CONF

    proc = run_cli([f"hydra.searchpath=[{SUPPORT_CONF}]", "model=flaky_oracle", "model.fail_on=[1,2]",
                    "run.fail_on_error=2", "benchmark.num_samples=6", "run.batch_size=1",
                    f"run.store_dir={tmp_path / 'store'}"], cwd=tmp_path)
    assert proc.returncode == 1
    assert "Run stopped: run.fail_on_error=2: stopped after 2 failed generation(s) of 6 sample(s)" in proc.stderr
    assert "Traceback" not in proc.stderr


def test_a_sweep_with_cfg_job_is_a_usage_error_exiting_2_with_the_way_to_see_one_jobs_config(tmp_path):
    for args in (["-m", "model=oracle,static", "--cfg", "job"], ["--multirun", "--info"]):
        proc = run_cli(args, cwd=tmp_path)
        assert proc.returncode == 2, proc.stderr
        assert "Traceback" not in proc.stderr
        assert "--multirun and " in proc.stderr and "cannot be combined" in proc.stderr
    assert "python -m wfeval model=oracle --cfg job" in run_cli(["-m", "model=oracle,static", "--cfg", "job"],
                                                               cwd=tmp_path).stderr
    assert not (tmp_path / "multirun").exists()
