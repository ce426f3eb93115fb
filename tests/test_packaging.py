"""An installed (non-editable) wheel carries the configs and runs from any folder."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile

import pytest

from tests.conftest import ROOT

pytestmark = pytest.mark.subprocess  # pip and a built wheel, run outside the checkout


def test_pyproject_lists_every_package_folder():
    tomllib = pytest.importorskip("tomllib")  # Python >= 3.11
    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    found = {".".join(p.parent.relative_to(ROOT).parts) for folder in ("wfeval", "hydra_plugins")
             for p in (ROOT / folder).rglob("__init__.py")}
    assert found | {"wfeval.conf"} == listed


def test_wheel_ships_the_config_tree_and_runs_outside_the_checkout(tmp_path):
    # build from a clean copy: an in-tree build/ folder could leak stale modules into the wheel
    source = tmp_path / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md", "wfeval", "conf", "hydra_plugins"):
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        copy(ROOT / name, source / name, **({"ignore": shutil.ignore_patterns("__pycache__")}
                                            if (ROOT / name).is_dir() else {}))
    build = subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation", "-q",
                            "-w", str(tmp_path / "dist"), str(source)], capture_output=True, text=True, timeout=300)
    assert build.returncode == 0, build.stderr
    [wheel] = (tmp_path / "dist").glob("wfeval-*.whl")
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = {n.removeprefix("wfeval/conf/") for n in names if n.startswith("wfeval/conf/") and n.endswith(".yaml")}
    in_tree = {str(p.relative_to(ROOT / "conf")) for p in (ROOT / "conf").rglob("*.yaml")}
    assert shipped == in_tree and "config.yaml" in shipped
    assert "hydra_plugins/wfeval_configs/__init__.py" in names  # the config source of the derived schemas

    site = tmp_path / "site"
    zipfile.ZipFile(wheel).extractall(site)
    # -S: skip site-packages' .pth files, so the editable checkout is not importable.
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(site), sysconfig.get_paths()["purelib"]])}
    env.pop("HYDRA_FULL_ERROR", None)
    where = subprocess.run([sys.executable, "-S", "-c", "import wfeval; print(wfeval.__file__)"],
                           cwd=tmp_path, env=env, capture_output=True, text=True)
    assert where.stdout.strip().startswith(str(site)), where.stdout + where.stderr
    run = subprocess.run([sys.executable, "-S", "-m", "wfeval", "benchmark.num_samples=2", "run.progress=off"],
                         cwd=tmp_path, env=env, capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    assert "gridworld.generated_rate" in run.stdout
    assert list((tmp_path / "outputs" / "runs").glob("*/results.json"))
    assert list((tmp_path / "outputs" / "runs").glob("*/report.html"))  # the report's templates are shipped


def test_a_checkout_composes_its_own_configs_even_beside_another_editable_install(tmp_path):
    """wfeval imported from a second checkout (PYTHONPATH) composes that checkout's conf/, not the tree
    the editable install of this checkout maps the name ``wfeval.conf`` to (docs/architecture.md)."""
    other = tmp_path / "other"
    other.mkdir()
    for name in ("pyproject.toml", "wfeval", "conf", "hydra_plugins"):
        copy = shutil.copytree if (ROOT / name).is_dir() else shutil.copy2
        copy(ROOT / name, other / name, **({"ignore": shutil.ignore_patterns("__pycache__")}
                                           if (ROOT / name).is_dir() else {}))
    gridworld = other / "conf" / "benchmark" / "gridworld.yaml"
    gridworld.write_text(gridworld.read_text().replace("\nnum_samples: 32\n", "\nnum_samples: 5\n"))
    env = {k: v for k, v in os.environ.items() if k != "HYDRA_FULL_ERROR"}
    env["PYTHONPATH"] = str(other)
    where = subprocess.run([sys.executable, "-c", "import wfeval, wfeval.conf; print(wfeval.__file__); "
                            "print(wfeval.conf.__file__)"], cwd=tmp_path, env=env, capture_output=True, text=True)
    assert where.stdout.split() == [str(other / "wfeval" / "__init__.py"), str(other / "conf" / "__init__.py")]
    done = subprocess.run([sys.executable, "-m", "wfeval", "--cfg", "job", "-p", "benchmark.num_samples"],
                          cwd=tmp_path, env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "5"
