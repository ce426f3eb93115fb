"""The game benchmarks as configs: a missing package is a config error naming the extra, the CLI's
--help and --cfg job import no game package, and bad game options are refused with their key."""

from __future__ import annotations

import importlib.util
import subprocess
import sys

import pytest

from tests.conftest import cli_env, compose, run_cli
from wfeval.config.errors import ConfigError
from wfeval.pipeline import build

GAMES = ("ale_py", "crafter", "gymnasium")


@pytest.mark.parametrize("game,module", [("atari_pong", "ale_py"), ("crafter", "crafter")])
def test_a_missing_game_package_is_a_config_error_naming_the_extra(game, module, monkeypatch):
    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec", lambda name, *a: None if name == module else real(name, *a))
    with pytest.raises(ConfigError, match=r"pip install 'wfeval\[games\]'"):
        build.build_benchmark(compose([f"benchmark={game}"]))


@pytest.mark.subprocess  # the games' packages hidden from a fresh interpreter
def test_the_cli_says_how_to_install_the_games_and_exits_2(tmp_path):
    probe = ("import sys, runpy\nsys.modules['ale_py'] = None  # as if ale-py were not installed\n"
             "sys.argv = ['wfeval'] + sys.argv[1:]\nrunpy.run_module('wfeval', run_name='__main__')\n")
    proc = subprocess.run([sys.executable, "-c", probe, "benchmark=atari_pong", "model=static"], cwd=tmp_path,
                          env=cli_env(), capture_output=True, text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr
    assert "pip install 'wfeval[games]'" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.subprocess  # an import-laziness probe
def test_help_and_cfg_job_do_not_import_any_game_package(tmp_path):
    probe = (
        "import atexit, sys, runpy\n"
        f"atexit.register(lambda: print('GAMES', sorted(m for m in {GAMES!r} if m in sys.modules)))\n"
        "sys.argv = ['wfeval'] + sys.argv[1:]\n"
        "runpy.run_module('wfeval', run_name='__main__')\n"
    )
    for args in (["--help"], ["--cfg", "job", "benchmark=atari_pong", "model=game_oracle"]):
        proc = subprocess.run([sys.executable, "-c", probe, *args], cwd=tmp_path, env=cli_env(),
                              capture_output=True, text=True, timeout=120)
        assert proc.returncode == 0, proc.stderr
        assert "GAMES []" in proc.stdout, proc.stdout[-500:]
    assert "game: pong" in proc.stdout and "SimulatorOracle" in proc.stdout


def test_bad_game_options_are_refused_with_their_key(tmp_path):
    pytest.importorskip("ale_py")
    with pytest.raises(ConfigError, match="benchmark.env.game: 'pongg'.*Did you mean: pong"):
        build.build_benchmark(compose(["benchmark=atari_pong", "benchmark.env.game=pongg"]))
    with pytest.raises(ConfigError, match="benchmark.rom_md5: the installed pong.bin has md5 60e0ea3c"):
        build.build_benchmark(compose(["benchmark=atari_pong", "benchmark.rom_md5=0123"]))
    with pytest.raises(ConfigError, match="benchmark.policy.kind: 'greedy' is not one of uniform, sticky, file"):
        build.build_benchmark(compose(["benchmark=atari_pong", "benchmark.policy.kind=greedy"]))
    with pytest.raises(ConfigError, match="benchmark.split: 'train'"):
        build.build_benchmark(compose(["benchmark=atari_pong", "benchmark.split=train"]))
    proc = run_cli(["benchmark=atari_pong", "benchmark.env.framesip=2"], cwd=tmp_path)
    assert proc.returncode == 2 and "benchmark.env.framesip" in proc.stderr and "frameskip" in proc.stderr
