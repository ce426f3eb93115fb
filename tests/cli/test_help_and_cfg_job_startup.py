"""``--help`` and ``--cfg job`` start fast and print what deriving every schema afresh prints.

The option schemas' fields come from a cache keyed by wfeval's sources and the help text from a
cache keyed by the command line, the config files and the sources; the reference here derives every
schema from its class and composes the help anew (no cache read or written), as wfeval did before
the caches: every command of the reference in one fresh interpreter (each called as ``python -m wfeval``
runs it: tests/in_process.py), the commands under test each in its own. Timings are in
perf/cli_startup.py, not here.
"""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.conftest import cli_env

pytestmark = pytest.mark.subprocess  # the start-up of a fresh interpreter

# wfeval without its caches: every option schema derived from its class, the help composed anew; each
# command line of the JSON list argv[1] called as `python -m wfeval ARGS` runs it, in this one interpreter:
# [exit status, stdout, stderr] of each, as JSON on stdout
EAGER = (
    "import json, os, sys\n"
    "from pathlib import Path\n"
    "import wfeval.config.schema_cache as cache\n"
    "cache.load = lambda group, option, target: None\n"
    "cache.save_many = lambda entries: None\n"
    "import wfeval.cli.help_cache as help_cache\n"
    "help_cache.key = lambda argv: None\n"
    "from tests.in_process import command_main, in_process\n"
    "runs = [in_process(command_main(['-m', 'wfeval']), ['-m', 'wfeval', *args], Path.cwd(), dict(os.environ))\n"
    "        for args in json.loads(sys.argv[1])]\n"
    "print(json.dumps([[p.returncode, p.stdout, p.stderr] for p in runs]))\n"
)
# the real entry, as `python -m wfeval` runs it (its __main__ file as sys.argv[0]: Hydra's help shows it),
# reporting which heavy modules it imported
PROBE = (
    "import atexit, sys, runpy\n"
    "atexit.register(lambda: print('HEAVY', sorted(m for m in ('numpy', 'scipy', 'torch', 'av', 'PIL')"
    " if m in sys.modules), file=sys.stderr))\n"
    "runpy.run_module('wfeval', run_name='__main__', alter_sys=True)\n"
)
COMMANDS = [
    ["--help"],
    ["--cfg", "job"],
    ["model=static", "metric=[psnr,fvd]", "--cfg", "job"],
    ["task=goal_reaching", "protocol=planning", "--cfg", "job"],
    ["benchmark=atari_pong", "model=learned", "model.checkpoint=/x/model.pt", "--cfg", "job", "--resolve"],
    ["metric=[psnr]", "metric.psnr.max_bd=3", "--cfg", "job"],  # a key typo in a metric: exit 2
    ["metric=[ssim]", "metric.ssim.skip_frames=some", "--cfg", "job"],  # a wrong type: exit 2
    ["--hydra-help"],
]


def _run(code: str, args: list[str], cwd, cache) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-c", code, *args], cwd=cwd, env=cli_env(WFEVAL_CACHE=str(cache)),
                          capture_output=True, text=True, timeout=120)


def _heavy(proc: subprocess.CompletedProcess) -> tuple[str, str]:
    """stderr without the probe's line, and that line."""
    lines = proc.stderr.splitlines(keepends=True)
    return "".join(line for line in lines if not line.startswith("HEAVY ")), \
        next(line for line in lines if line.startswith("HEAVY ")).strip()


def _references(commands: list[list[str]], cwd) -> list[tuple[int, str, str]]:
    """(exit status, stdout, stderr) of each command of wfeval without its caches (EAGER)."""
    proc = _run(EAGER, [json.dumps(commands)], cwd, cwd / "unused")
    assert proc.returncode == 0, proc.stderr
    assert not (cwd / "unused").exists(), "the reference read or wrote no cache"
    return [tuple(run) for run in json.loads(proc.stdout)]


def test_help_and_cfg_job_print_byte_for_byte_what_schemas_derived_afresh_print(tmp_path):
    cache = tmp_path / "cache"
    for index, (args, reference) in enumerate(zip(COMMANDS, _references(COMMANDS, tmp_path))):
        assert reference[0] == (2 if "metric=[psnr]" in args or "metric=[ssim]" in args else 0), reference[2]
        runs = [_run(PROBE, args, tmp_path, cache)]  # the first command fills the schema cache
        if index == 0:
            runs.append(_run(PROBE, args, tmp_path, cache))  # ... and the second reads it
        for proc in runs:
            stderr, _ = _heavy(proc)
            assert (proc.returncode, proc.stdout, stderr) == reference, args
    assert list((cache / "schemas").glob("options-*.json")), "the option schemas were cached"
    assert list((cache / "help").glob("*.txt")), "the help text was kept"


def test_help_lists_the_groups_a_user_picks_and_the_composed_config(tmp_path):
    proc = _run(PROBE, ["--help", "model=static"], tmp_path, tmp_path / "cache")
    assert proc.returncode == 0, proc.stderr
    groups = proc.stdout.split("== Configuration groups ==")[1].split("== Config ==")[0]
    assert "\nmodel: blur, command," in groups and "\ntracker: mlflow, tensorboard, wandb\n" in groups
    assert "schema" not in groups and "hydra/" not in groups
    assert "\nmodel:\n  output_range: null\n  _target_: wfeval.benchmarks.gridworld.baselines.StaticModel\n" in proc.stdout


def test_config_errors_exit_2_without_a_traceback_with_lazy_schemas(tmp_path):
    for args, expected in ((["metric=[psnr]", "metric.psnr.max_bd=3", "--cfg", "job"], "Key 'max_bd' not in 'PsnrSchema'"),
                           (["metric=[ssim]", "metric.ssim.skip_frames=some", "--help"], "full_key: metric.ssim.skip_frames"),
                           (["model=static", "model.nmae=x", "--cfg", "job"], "full_key: model.nmae")):
        proc = _run(PROBE, args, tmp_path, tmp_path / "cache")
        assert proc.returncode == 2, (args, proc.stderr)
        assert expected in proc.stderr and "Traceback" not in proc.stderr, (args, proc.stderr)


def test_help_and_cfg_job_import_no_numpy_scipy_torch_av_or_pil_once_the_schema_cache_is_filled(tmp_path):
    cache = tmp_path / "cache"
    _run(PROBE, ["--cfg", "job"], tmp_path, cache)
    for args in (["--help"], ["--cfg", "job"], ["model=static", "metric=[psnr,ssim,flicker]", "--cfg", "job"]):
        proc = _run(PROBE, args, tmp_path, cache)
        assert proc.returncode == 0, proc.stderr
        assert _heavy(proc)[1] == "HEAVY []", (args, proc.stderr[-300:])
