"""One door for code (wfeval/config/code.py): every config value that names code -- a ``_target_``, or
an import path held by a parameter typed ``ImportPath`` -- is imported there, after the trust check.

The walk covers every class a config can build: the ``_target_`` of every file under conf/ (nested ones
too), the metric registry and every installed plugin's entry point. Which parameters take an import path
is read from their type, never from a list of key names; the static check proves that nothing else in
wfeval imports a module named by a value.
"""

from __future__ import annotations

import ast
import functools
import importlib.abc
import sys
import textwrap
from pathlib import Path

import pytest
import yaml

import wfeval
from tests.robustness._trust_support import assert_refused, cli, write
from wfeval.config import code
from wfeval.config.code import import_path_parameters
from wfeval.config.trust import TrustPolicy, UntrustedTargetError, activated, find_untrusted

ROOT = Path(wfeval.__file__).resolve().parent
CONF = ROOT.parent / "conf"
PAYLOAD = "wfeval_door_payload"  # a module the tests write; importing it leaves a marker file


@pytest.fixture
def payload(tmp_path, monkeypatch):
    """An importable module whose import writes ``IMPORTED`` and whose class, built, writes ``BUILT``."""
    (tmp_path / f"{PAYLOAD}.py").write_text(textwrap.dedent(f"""\
        import pathlib
        pathlib.Path({str(tmp_path / 'IMPORTED')!r}).write_text("imported")
        class Payload:
            def __init__(self, *args, **kwargs):
                pathlib.Path({str(tmp_path / 'BUILT')!r}).write_text("built")
            def __call__(self, *args, **kwargs):
                return None
        """))
    monkeypatch.syspath_prepend(str(tmp_path))
    sys.modules.pop(PAYLOAD, None)
    yield tmp_path
    sys.modules.pop(PAYLOAD, None)


def _targets(node, out):
    if isinstance(node, dict):
        if isinstance(node.get("_target_"), str) and node["_target_"] != "???":
            out.add(node["_target_"])
        for value in node.values():
            _targets(value, out)
    elif isinstance(node, list):
        for value in node:
            _targets(value, out)
    return out


def every_class_path() -> list[str]:
    """Every class a config can build: conf/**.yaml targets (nested too), the registries, entry points."""
    from wfeval.config.plugins import installed_plugins
    from wfeval.metrics.registry import builtin_targets

    found: set[str] = set()
    for path in sorted(CONF.rglob("*.yaml")):
        _targets(yaml.safe_load(path.read_text(encoding="utf-8")), found)
    found.update(builtin_targets().values())
    found.update(o.target.replace(":", ".") for o in installed_plugins().offers if o.target)
    return sorted(t for t in found if not t.startswith(("hydra.", "hydra_plugins.")))


@functools.lru_cache(maxsize=1)
def every_class() -> dict[str, type]:
    out = {}
    for path in every_class_path():
        try:
            obj = code.load(path, "_target_", TrustPolicy(prefixes=("*",)))
        except ImportError:  # a family whose package is not installed here
            continue
        if isinstance(obj, type):
            out[path] = obj
    return out


def import_path_parameters_by_class() -> list[tuple[str, str]]:
    return [(path, name) for path, cls in every_class().items() for name in import_path_parameters(cls)]


def test_the_walk_reaches_every_kind_of_class_and_their_import_path_parameters_by_type():
    classes = every_class()
    modules = {path.split(".")[1] for path in classes}
    assert {"metrics", "models", "benchmarks", "trackers", "protocols"} <= modules, modules
    assert any(".policies." in path for path in classes)
    declared = {(path.rsplit(".", 1)[-1], name) for path, name in import_path_parameters_by_class()}
    assert {("IDMAccuracy", "idm"), ("ActionFollowing", "locator"), ("ActionFollowing", "inverse_dynamics"),
            ("PythonModel", "object")} <= declared, declared
    assert ("IDMAccuracy", "confidence") not in declared  # a float is data


@pytest.mark.parametrize("path,name", import_path_parameters_by_class())
def test_an_untrusted_import_path_at_any_import_path_parameter_is_refused_before_import(payload, path, name):
    key = "node"
    with activated(TrustPolicy()):
        with pytest.raises(UntrustedTargetError, match=rf"node\.{name}: '{PAYLOAD}\.Payload'"):
            code.instantiate({"_target_": path, name: f"{PAYLOAD}.Payload"}, key)
        findings = find_untrusted({"model": {"_target_": path, name: f"{PAYLOAD}:Payload"}}, TrustPolicy())
    assert [(f.key, f.target) for f in findings] == [(f"model.{name}", f"{PAYLOAD}:Payload")]
    assert PAYLOAD not in sys.modules and not (payload / "IMPORTED").exists()


class ImportSpy(importlib.abc.MetaPathFinder):
    """Records every attempt to import a module under ``root`` (finds nothing itself)."""

    def __init__(self, root: str):
        self.root, self.seen = root, []

    def find_spec(self, name, path, target=None):
        if name.split(".")[0] == self.root:
            self.seen.append(name)
        return None


@pytest.fixture
def spy():
    finder = ImportSpy("wfeval_door_probe")
    sys.meta_path.insert(0, finder)
    yield finder
    sys.meta_path.remove(finder)


@functools.lru_cache(maxsize=1)
def _option_values() -> dict[str, dict]:
    """The values each class's own option file gives it (its required parameters among them)."""
    out: dict[str, dict] = {}
    for path in sorted(CONF.rglob("*.yaml")):
        data = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        if isinstance(data, dict) and isinstance(data.get("_target_"), str):
            out.setdefault(data["_target_"], {k: v for k, v in data.items() if v != "???"})
    return out


def test_the_import_spy_sees_an_import_the_door_lets_through(spy):
    from wfeval.metrics.controllability import IDMAccuracy

    with activated(TrustPolicy(prefixes=("wfeval_door_probe.",))), pytest.raises(ValueError, match="cannot import"):
        IDMAccuracy(idm="wfeval_door_probe.Payload")
    assert spy.seen == ["wfeval_door_probe"]


@pytest.mark.parametrize("path", sorted(every_class()))
def test_no_parameter_of_any_class_imports_the_value_it_is_given(path, spy, tmp_path, monkeypatch):
    """Each parameter in turn given an import path (the others from the class's option file): the
    class is built through the door with nothing trusted; whatever it does with the string, nothing
    imports it (an ImportPath parameter is refused by the door, any other holds it as data)."""
    monkeypatch.chdir(tmp_path)  # a tracker or benchmark that writes writes here
    cls = every_class()[path]
    params = [p.name for p in code.init_parameters(cls)]
    given = {k: v for k, v in _option_values().get(path, {}).items() if k in params}
    with activated(TrustPolicy()):
        for name in params:
            try:
                code.instantiate({"_target_": path, **given, name: "wfeval_door_probe.Payload"}, "node")
            except UntrustedTargetError:
                assert name in import_path_parameters(cls), name
            except Exception:  # noqa: BLE001 - refused as a value: what matters is that nothing was imported
                pass
    assert spy.seen == [], path


def test_the_door_imports_an_import_path_given_on_the_command_line_or_trusted(payload):
    from wfeval.metrics.controllability import IDMAccuracy

    given = TrustPolicy.from_overrides([f"metric.idm.idm={PAYLOAD}.Payload"], environ={})
    with activated(given):
        metric = code.instantiate({"_target_": "wfeval.metrics.controllability.IDMAccuracy",
                                   "idm": f"{PAYLOAD}.Payload"}, "metric.idm")
    assert isinstance(metric, IDMAccuracy) and type(metric.idm).__name__ == "Payload"
    assert (payload / "BUILT").exists()
    with activated(TrustPolicy()), pytest.raises(UntrustedTargetError, match=r"metric\.idm_accuracy\.idm"):
        IDMAccuracy(idm=f"{PAYLOAD}.Other")  # a Python caller's string passes the same door
    with activated(TrustPolicy(prefixes=(f"{PAYLOAD}.",))):
        assert type(IDMAccuracy(idm=f"{PAYLOAD}:Payload").idm).__name__ == "Payload"


def test_a_refusal_inside_a_constructor_is_the_refusal_not_a_build_error(payload):
    from wfeval.pipeline.build import instantiate_node

    node = {"_target_": "wfeval.models.python.PythonModel",
            "object": {"_target_": "wfeval.models.python.PythonModel", "object": f"{PAYLOAD}.Payload"}}
    with activated(TrustPolicy()), pytest.raises(UntrustedTargetError, match=r"model\.object\.object"):
        instantiate_node("model", node)
    assert PAYLOAD not in sys.modules


def test_the_idm_import_path_written_by_a_benchmark_file_is_refused_naming_the_file(tmp_path):
    """The measured case: a benchmark file on the search path (``# @package _global_``) writes
    ``metric.idm_accuracy.idm: evil.Payload`` next to a module ``evil.py`` in the working folder."""
    (tmp_path / "evil.py").write_text(f"import pathlib\npathlib.Path({str(tmp_path / 'IMPORTED')!r}).write_text('x')\n"
                                      "class Payload:\n    pass\n")
    conf = tmp_path / "conf"
    bench = write(conf, "benchmark/evilbench.yaml", """\
        # @package _global_
        defaults:
          - /benchmark/gridworld@benchmark
        benchmark:
          num_samples: 2
        metric:
          idm_accuracy:
            idm: evil.Payload
        """)
    proc = cli(tmp_path, f"hydra.searchpath=[file://{conf}]", "task=controllability", "benchmark=evilbench")
    assert_refused(proc, str(bench), "metric.idm_accuracy.idm", "'evil.Payload'")
    assert not (tmp_path / "IMPORTED").exists()
    assert not (tmp_path / "outputs").exists()  # refused before Hydra made the run folder


# --- the static half: nothing else imports a module a value names -----------------------------------

#: functions that import (or build) what a string names, by where they come from
IMPORTERS = {"importlib.import_module", "builtins.__import__", "importlib.__import__", "pydoc.locate",
             "importlib.util.spec_from_file_location", "hydra.utils.get_class", "hydra.utils.get_method",
             "hydra.utils.get_object", "hydra.utils.instantiate", "hydra.utils._locate", "hydra._internal.utils._locate",
             "hydra._internal.utils.call", "hydra._internal.instantiate._instantiate2.instantiate"}
#: the only places besides the door, each importing one of wfeval's own fixed module names (no value
#: of a config reaches them; test_the_allowed_imports_take_only_wfeval_s_own_fixed_names shows it)
ALLOWED = {
    ("__init__.py", "importlib.util.spec_from_file_location"),  # wfeval.conf: the conf/ folder beside the package
    ("__init__.py", "exec_module"),
    ("functional/__init__.py", "importlib.import_module"),  # lazy exports: _MODULES / _ELSEWHERE
    ("benchmarks/episodes/__init__.py", "importlib.import_module"),  # lazy reader classes: _CLASSES
    ("pipeline/overlap.py", "importlib.import_module"),  # torch / a metric class's `imports` before threads start
}


def _origin(func: ast.expr, names: dict[str, str]) -> str | None:
    """Where a called name comes from: ``importlib.import_module``, ``hydra.utils.instantiate``, ..."""
    parts = []
    while isinstance(func, ast.Attribute):
        parts.append(func.attr)
        func = func.value
    if not isinstance(func, ast.Name):
        return parts[0] if parts and parts[0] == "exec_module" else None  # spec.loader.exec_module(...)
    base = names.get(func.id, "builtins.__import__" if func.id == "__import__" and not parts else None)
    if parts and parts[0] == "exec_module":
        return "exec_module"
    return ".".join([base, *reversed(parts)]) if base else None


@functools.lru_cache(maxsize=1)
def _importing_calls() -> tuple[tuple[str, str, int], ...]:
    return tuple(_scan())


def _scan():
    for path in sorted(ROOT.rglob("*.py")):
        rel = path.relative_to(ROOT).as_posix()
        if rel == "config/code.py":
            continue
        tree = ast.parse(path.read_text(encoding="utf-8"))
        names: dict[str, str] = {}  # what each imported name is, anywhere in the module
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    names[alias.asname or alias.name.split(".")[0]] = alias.name if alias.asname else alias.name.split(".")[0]
            elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
                for alias in node.names:
                    names[alias.asname or alias.name] = f"{node.module}.{alias.name}"
        for node in ast.walk(tree):
            if isinstance(node, ast.Call):
                origin = _origin(node.func, names)
                if origin in IMPORTERS or origin == "exec_module":
                    yield rel, origin, node.lineno


def test_no_module_but_the_door_imports_a_named_module():
    found = [(rel, name, line) for rel, name, line in _importing_calls() if (rel, name) not in ALLOWED]
    assert found == [], "import through wfeval.config.code (load / resolve / instantiate) instead"


def test_the_allowed_imports_take_only_wfeval_s_own_fixed_names():
    import wfeval.benchmarks.episodes as episodes
    import wfeval.functional as functional
    from wfeval.metrics.registry import REGISTRY, builtin_targets

    assert {rel for rel, _, _ in _importing_calls()} == {rel for rel, _ in ALLOWED}
    named = [*functional._MODULES, *functional._ELSEWHERE.values(), *episodes._CLASSES.values()]
    assert named and all(isinstance(m, str) and m.startswith("wfeval.") for m in named)
    # overlap.py imports torch and the metrics' `imports`: a class attribute, never an __init__ parameter
    for metric_id in builtin_targets():
        cls = REGISTRY.load(metric_id)
        assert "imports" not in import_path_parameters(cls)
        assert "imports" not in __import__("inspect").signature(cls).parameters, metric_id
    source = (ROOT / "pipeline" / "overlap.py").read_text(encoding="utf-8")
    assert 'getattr(metric, "imports", ())' in source and "importlib.import_module(name)" in source


def test_a_run_folder_override_shaped_like_an_import_path_needs_the_user_s_trust():
    """Read without its config, a resumed folder's override that could name code (any key) is refused
    unless trusted; plain values pass."""
    from wfeval.config.trust import refused_overrides

    overrides = ["metric.idm_accuracy.idm=evil.Payload", "benchmark.num_samples=2", "model=oracle",
                 "run.device=cuda:0", "run.store_dir=/tmp/a.b/store", "metric.action_following.locator=wfeval.functional.control.ColorLocator"]
    assert refused_overrides(overrides, ()) == ["metric.idm_accuracy.idm=evil.Payload  (evil.Payload is not trusted)"]
    assert refused_overrides(overrides, ("evil.",)) == []
