"""A plugin package installed with pip adds a model, a benchmark, a protocol, a metric, a policy and a
task that run with no flag (no hydra.searchpath, no run.trust): docs/plugins.md.

Two small packages are built as wheels here and installed with pip into one folder that the CLI's
subprocesses import from (``PYTHONPATH``: importlib.metadata reads their entry points there):

- ``wfeval-demo-plugin``: its classes through the kind entry points (``wfeval.models``, ...), its
  config files through ``wfeval.configs``; a policy and a task with no config file (served from their
  entry points);
- ``wfeval-clash-plugin``: a model named like a built-in (``static``), a model whose module fails to
  import, and a ``wfeval.configs`` entry naming no folder -- none of which may disturb a run that does
  not choose them.
"""

from __future__ import annotations

import base64
import hashlib
import json
import os
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.subprocess  # plugins installed with pip, found through their entry points

DEMO = {
    "wfeval_demo_plugin/__init__.py": "",
    "wfeval_demo_plugin/parts.py": '''
import numpy as np

from wfeval.benchmarks.gridworld import GridworldBenchmark
from wfeval.benchmarks.gridworld.baselines import StaticModel
from wfeval.metrics.reference import MAE
from wfeval.protocols.closed_loop import ClosedLoop
from wfeval.protocols.policies import RandomPolicy


class DemoGrid(GridworldBenchmark):
    """The gridworld, offered by a plugin."""


class DemoStatic(StaticModel):
    name = "demo_static"


class DemoClosedLoop(ClosedLoop):
    """Closed loop, offered by a plugin."""


class DemoMAE(MAE):
    """Mean absolute error computed with plain numpy (per frame, then the mean over frames)."""

    name = "demo_mae"
    aliases = ()

    def score(self, preds, target):
        error = np.abs(np.asarray(preds, dtype=np.float64) - np.asarray(target, dtype=np.float64))
        curve = error.reshape(error.shape[0], -1).mean(axis=1)
        return curve.mean(), curve, {}


class DemoPolicy(RandomPolicy):
    """Random actions, offered by a plugin."""


DEMO_TASK = {"name": "demo_task", "protocol": "open_loop", "evaluation_protocol": "reference_metrics",
             "capability_track": "core_video", "input_keys": ["image", "actions"],
             "output_keys": ["generated_video"], "description": "The action-video task, from a plugin."}
''',
    "wfeval_demo_plugin/conf/model/demo_static.yaml": """
defaults:
  - /schema/model/demo_static@_here_
  - _self_
_target_: wfeval_demo_plugin.parts.DemoStatic
name: demo_static
""",
    "wfeval_demo_plugin/conf/protocol/demo_closed_loop.yaml": """
defaults:
  - /schema/protocol/demo_closed_loop@_here_
  - _self_
_target_: wfeval_demo_plugin.parts.DemoClosedLoop
name: demo_closed_loop
context_frames: 1
metric_groups: []
""",
    "wfeval_demo_plugin/conf/benchmark/demo_grid.yaml": """
defaults:
  - /schema/benchmark/demo_grid@_here_
  - _self_
_target_: wfeval_demo_plugin.parts.DemoGrid
name: demo_grid
version: "1.0"
splits: [test]
split: test
num_samples: 3
seed: 1234
num_frames: 6
fps: 8
world: {height: 32, width: 32, cell: 8, n_walls: 2, n_objects: 1}
metrics: [mae, demo_mae]
""",
    "wfeval_demo_plugin/conf/metric/demo_mae.yaml": """
# @package metric.demo_mae
defaults:
  - /schema/metric/demo_mae@_here_
  - _self_
_target_: wfeval_demo_plugin.parts.DemoMAE
skip_frames: ${protocol.context_frames}
""",
}
DEMO_ENTRY_POINTS = {
    "wfeval.configs": {"wfeval_demo_plugin": "wfeval_demo_plugin.conf"},
    "wfeval.models": {"demo_static": "wfeval_demo_plugin.parts:DemoStatic"},
    "wfeval.benchmarks": {"demo_grid": "wfeval_demo_plugin.parts:DemoGrid"},
    "wfeval.protocols": {"demo_closed_loop": "wfeval_demo_plugin.parts:DemoClosedLoop"},
    "wfeval.metrics": {"demo_mae": "wfeval_demo_plugin.parts:DemoMAE"},
    "wfeval.policies": {"demo_policy": "wfeval_demo_plugin.parts:DemoPolicy"},
    "wfeval.tasks": {"demo_task": "wfeval_demo_plugin.parts:DEMO_TASK"},
}
CLASH = {
    "wfeval_clash_plugin/__init__.py": "",
    "wfeval_clash_plugin/models.py": "from wfeval.benchmarks.gridworld.baselines import StaticModel as Static\n",
    "wfeval_clash_plugin/broken.py": "raise ImportError('the plugin author forgot a dependency')\n",
}
CLASH_ENTRY_POINTS = {
    "wfeval.models": {"static": "wfeval_clash_plugin.models:Static",
                      "clash_broken": "wfeval_clash_plugin.broken:Model"},
    "wfeval.configs": {"missing": "wfeval_clash_plugin.no_such_folder"},
}


def build_wheel(folder: Path, name: str, files: dict[str, str], entry_points: dict[str, dict[str, str]]) -> Path:
    """A pure-Python wheel (PEP 427) of ``files`` with these entry points: what a build backend makes."""
    dist = name.replace("-", "_")
    info = f"{dist}-0.1.0.dist-info"
    contents = dict(files)
    contents[f"{info}/METADATA"] = f"Metadata-Version: 2.1\nName: {name}\nVersion: 0.1.0\n"
    contents[f"{info}/WHEEL"] = "Wheel-Version: 1.0\nGenerator: wfeval-tests\nRoot-Is-Purelib: true\nTag: py3-none-any\n"
    contents[f"{info}/entry_points.txt"] = "".join(
        f"[{group}]\n" + "".join(f"{k} = {v}\n" for k, v in eps.items()) + "\n" for group, eps in entry_points.items())
    record = []
    for path, text in contents.items():
        data = text.encode()
        digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=").decode()
        record.append(f"{path},sha256={digest},{len(data)}")
    contents[f"{info}/RECORD"] = "\n".join([*record, f"{info}/RECORD,,"]) + "\n"
    wheel = folder / f"{dist}-0.1.0-py3-none-any.whl"
    with zipfile.ZipFile(wheel, "w") as archive:
        for path, text in contents.items():
            archive.writestr(path, text)
    return wheel


@pytest.fixture(scope="module")
def installed(tmp_path_factory) -> Path:
    """Both plugin packages installed with pip into one folder (their dist-info and entry points too)."""
    work = tmp_path_factory.mktemp("plugins")
    wheels = [build_wheel(work, "wfeval-demo-plugin", DEMO, DEMO_ENTRY_POINTS),
              build_wheel(work, "wfeval-clash-plugin", CLASH, CLASH_ENTRY_POINTS)]
    target = work / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index", "--quiet",
                    "--disable-pip-version-check", "--target", str(target), *map(str, wheels)], check=True)
    assert (target / "wfeval_demo_plugin-0.1.0.dist-info" / "entry_points.txt").is_file()
    return target


def _env(site: Path, store: Path) -> dict:
    """The user's environment: the installed packages importable, and no trust granted."""
    env = {k: v for k, v in os.environ.items() if k not in ("WFEVAL_TRUST", "HYDRA_FULL_ERROR")}
    env["PYTHONPATH"] = os.pathsep.join([str(site), str(ROOT)])
    env["WFEVAL_STORE"] = str(store)
    return env


def _wfeval(args: list[str], site: Path, cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, "-m", "wfeval", *args], cwd=cwd, env=_env(site, cwd / "store"),
                          capture_output=True, text=True, timeout=300)


def test_an_installed_plugin_runs_its_model_benchmark_protocol_metric_policy_and_task_with_no_flag(installed,
                                                                                                  tmp_path):
    run_dir = tmp_path / "run"
    done = _wfeval(["model=demo_static", "benchmark=demo_grid", "protocol=demo_closed_loop", "policy=demo_policy",
                    "task=demo_task", "metric=[demo_mae,mae]", "run.report=false", "run.progress=off",
                    f"hydra.run.dir={run_dir}"], installed, tmp_path)
    assert done.returncode == 0, done.stderr[-3000:]
    results = json.loads((run_dir / "results.json").read_text())
    demo, builtin = results["results"]["demo_grid.demo_mae"], results["results"]["demo_grid.mae"]
    assert demo["n_valid"] == builtin["n_valid"] == 3
    value = demo["diagnostics"]["value"]  # the built-in MAE is the reference of the plugin's numpy one
    assert value > 0 and value == pytest.approx(builtin["diagnostics"]["value"], rel=1e-12)
    assert results["model"]["target"] == "wfeval_demo_plugin.parts.DemoStatic"
    assert results["benchmark"]["id"] == "demo_grid" and results["protocol"]["name"] == "demo_closed_loop"
    recorded = (run_dir / ".hydra" / "config.yaml").read_text()
    for target in ("wfeval_demo_plugin.parts.DemoGrid", "wfeval_demo_plugin.parts.DemoClosedLoop",
                   "wfeval_demo_plugin.parts.DemoMAE",
                   "wfeval_demo_plugin.parts.DemoPolicy"):  # a policy with no config file: its entry point
        assert f"_target_: {target}" in recorded
    assert "name: demo_task" in recorded


def test_a_name_offered_by_wfeval_and_a_plugin_is_refused_naming_both_packages(installed, tmp_path):
    done = _wfeval(["model=static", "run.report=false"], installed, tmp_path)
    assert done.returncode == 2, done.stderr[-3000:]
    message = done.stderr
    assert "model 'static' is offered by two packages: wfeval" in message
    assert "wfeval-clash-plugin (entry point wfeval.models: static = wfeval_clash_plugin.models:Static)" in message
    assert "Traceback" not in message and not (tmp_path / "outputs").exists()


def test_a_broken_plugin_is_named_with_its_entry_point_when_chosen(installed, tmp_path):
    done = _wfeval(["model=clash_broken", "run.report=false"], installed, tmp_path)
    assert done.returncode == 2, done.stderr[-3000:]
    assert ("the plugin package wfeval-clash-plugin cannot be loaded: its entry point wfeval.models: "
            "clash_broken = wfeval_clash_plugin.broken:Model raised ImportError: the plugin author forgot "
            "a dependency") in done.stderr
    assert "Traceback" not in done.stderr
    unknown = _wfeval(["model=nope", "run.report=false"], installed, tmp_path)
    assert unknown.returncode == 2
    assert "wfeval-clash-plugin 0.1.0, entry point wfeval.configs: missing = wfeval_clash_plugin.no_such_folder: " \
           "no such folder" in unknown.stderr
