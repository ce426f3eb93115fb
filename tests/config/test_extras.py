"""One table of extras: ``wfeval.config.extras.EXTRAS`` equals ``pyproject.toml``'s extras, README's
extras table lists every extra, and every "needs package X" message names an extra that exists and
installs X (no install command is spelled anywhere else in the package)."""

from __future__ import annotations

import ast
import re
import sys
import tomllib

import pytest

from tests.conftest import ROOT
from wfeval.config.errors import ConfigError
from wfeval.config.extras import DEV, EXTRAS, distribution_of, extra_of, install_hint, missing

PYPROJECT = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["project"]
DECLARED = PYPROJECT["optional-dependencies"]


def _name(requirement: str) -> str:
    return re.match(r"[A-Za-z0-9._-]+", requirement).group(0).lower().replace("_", "-")


def test_the_table_of_extras_is_pyprojects():
    declared = {extra: tuple(_name(r) for r in reqs) for extra, reqs in DECLARED.items() if extra != DEV}
    assert EXTRAS == declared


def test_dev_installs_every_extra_but_bench():
    dev = DECLARED[DEV]
    named = {m.group(1) for r in dev if (m := re.fullmatch(r"wfeval\[(\w+)\]", r))}
    listed = {_name(r) for r in dev if not r.startswith("wfeval[")}
    for extra, packages in EXTRAS.items():
        if extra != "bench":
            assert extra in named or set(packages) <= listed, extra


def test_readmes_extras_table_lists_every_extra_of_pyproject():
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    table = readme[readme.index("| install (after"):]
    table = table[:table.index("\n\n")]
    shown = set(re.findall(r"`pip install -e '\.\[(\w+)\]'`", table))
    assert shown == set(DECLARED)


def test_a_hint_names_the_extra_that_installs_the_package():
    for extra, packages in EXTRAS.items():
        for package in packages:
            assert install_hint(package, extra) == f"pip install 'wfeval[{extra}]'"
    assert install_hint("tiny-jepa") == "pip install 'wfeval[tinyjepa]'"
    assert install_hint(["memory-maze", "mujoco"]) == "pip install 'wfeval[maze3d]'"
    with pytest.raises(ValueError, match="name the extra"):
        install_hint("pillow")  # report and arena both install it: the caller must say which
    with pytest.raises(ValueError, match="does not install"):
        install_hint("ale-py", "tinyjepa")
    with pytest.raises(ValueError, match="no extra"):
        install_hint("not-a-package")


def test_missing_names_every_absent_package_and_their_extra():
    error = missing("The memory_maze benchmark family", ["memory_maze", "dm_control"])
    assert isinstance(error, ConfigError)
    assert str(error) == ("The memory_maze benchmark family needs the 'memory-maze', 'dm-control' packages, which "
                          "are not installed: pip install 'wfeval[maze3d]'")


def _source_calls():
    """Every ``require(...)`` call in the package naming its packages literally, as (file, distributions):
    ``wfeval.config.extras.require(what, modules)`` (import names) and the simulators'
    ``require(module, package, what)`` (the distribution named)."""
    for path in sorted((ROOT / "wfeval").rglob("*.py")):
        tree = ast.parse(path.read_text(encoding="utf-8"))
        from_extras = any(isinstance(n, ast.ImportFrom) and n.module == "wfeval.config.extras"
                          and any(a.name == "require" for a in n.names) for n in ast.walk(tree))
        for node in ast.walk(tree):
            if not (isinstance(node, ast.Call) and getattr(node.func, "id", None) == "require" and len(node.args) >= 2):
                continue
            second = node.args[1]
            if from_extras:
                names = [second] if isinstance(second, ast.Constant) else getattr(second, "elts", [])
                yield path.relative_to(ROOT), [distribution_of(n.value) for n in names if isinstance(n, ast.Constant)]
            elif isinstance(second, ast.Constant):
                yield path.relative_to(ROOT), [second.value]


def test_every_require_in_the_code_names_a_package_an_extra_installs():
    calls = list(_source_calls())
    named = {p for _, packages in calls for p in packages}
    assert {"ale-py", "crafter", "tiny-jepa", "pyarrow", "h5py", "sqlalchemy", "alembic"} <= named
    for path, packages in calls:
        assert packages, path
        for package in packages:
            assert extra_of(package) in EXTRAS, (path, package)  # raises when no extra (or several) installs it


def test_no_install_command_is_spelled_outside_the_table():
    spelled = []
    for path in sorted((ROOT / "wfeval").rglob("*.py")):
        if path.name != "extras.py" and "wfeval[" in path.read_text(encoding="utf-8"):
            spelled.append(str(path.relative_to(ROOT)))
    assert spelled == []


@pytest.mark.parametrize("what,call,extra", [
    ("The orby benchmark family", "wfeval.benchmarks.orby.simulator:_world_class", "tinyjepa"),
    ("model=tiny_jepa", "wfeval.benchmarks.orby.tiny_jepa:checkpoint_path", "tinyjepa"),
    ("The atari benchmark family", "wfeval.benchmarks.atari.simulator:_ale", "games"),
])
def test_a_missing_package_is_refused_with_its_own_extra_only(monkeypatch, what, call, extra):
    import importlib

    module_name, function = call.split(":")
    module = importlib.import_module(module_name)
    for hidden in ("tiny_jepa", "ale_py"):
        monkeypatch.setitem(sys.modules, hidden, None)  # not installed: not found
    with pytest.raises(ConfigError) as caught:
        getattr(module, function)()
    message = str(caught.value)
    assert message.startswith(f"{what} needs the ") and message.endswith(f"pip install 'wfeval[{extra}]'")
    assert message.count("pip install") == 1, message  # the orby family said games as well


@pytest.mark.parametrize("target,module,what", [
    ("wfeval.benchmarks.episodes:LeRobotBenchmark", "pyarrow", "benchmark=lerobot"),
    ("wfeval.benchmarks.episodes:HDF5Benchmark", "h5py", "benchmark=hdf5"),
    ("wfeval.benchmarks.episodes:MinariBenchmark", "h5py", "benchmark=minari"),
])
def test_a_dataset_reader_without_its_package_names_the_datasets_extra(monkeypatch, tmp_path, target, module, what):
    import importlib

    module_name, cls = target.split(":")
    reader = getattr(importlib.import_module(module_name), cls)
    monkeypatch.setitem(sys.modules, module, None)
    with pytest.raises(ConfigError) as caught:
        reader(dataset_root=str(tmp_path))
    assert str(caught.value) == (f"{what} needs the '{module}' package, which is not installed: "
                                 "pip install 'wfeval[datasets]'")
