"""The cached fields of the built-in options' schemas (every group) equal the fields derived from the
classes, and are used only under the key of the exact sources they were derived from."""

from __future__ import annotations

import ast
import dataclasses
import inspect
import json
import textwrap
from typing import Any, List, Optional

import pytest
from omegaconf import MISSING, OmegaConf

from wfeval.config import schema_cache
from wfeval.config.derive import builtin_schema, make_schema, schema_fields
from wfeval.config.code import import_target
from wfeval.config.plugins import CLASS_GROUPS, builtin_targets
from wfeval.config.schema import BASE_SCHEMAS

OPTIONS = {(group, option): target for group in CLASS_GROUPS for option, target in builtin_targets(group).items()}
PSNR = builtin_targets("metric")["psnr"]


@pytest.fixture
def cache(tmp_path, monkeypatch):
    monkeypatch.setenv("WFEVAL_CACHE", str(tmp_path))
    return tmp_path / "schemas"


def _derived(group: str, option: str) -> list:
    target = OPTIONS[(group, option)]
    return schema_fields(import_target(target), target)


def _same_fields(a: list, b: list) -> bool:
    return [(n, t, d, type(d)) for n, t, d in a] == [(n, t, d, type(d)) for n, t, d in b]


def _describe(schema: type) -> list:
    """Each field's name, type and default; a nested schema (a new class each time it is built) by
    its name and its own fields."""
    def kind(t):
        return ("nested", t.__name__, _describe(t)) if dataclasses.is_dataclass(t) else t

    def default(f):
        value = f.default_factory() if f.default_factory is not dataclasses.MISSING else f.default
        return dataclasses.asdict(value) if dataclasses.is_dataclass(value) else value

    return [(f.name, kind(f.type), default(f)) for f in dataclasses.fields(schema)]


@pytest.mark.parametrize("group,option", sorted(OPTIONS))
def test_a_cached_option_schema_equals_the_schema_derived_from_its_class(cache, group, option):
    target = OPTIONS[(group, option)]
    assert schema_cache.load(group, option, target) is None
    first = builtin_schema(group, option, target)  # derived from the class, and cached (with every other option)
    cached = schema_cache.load(group, option, target)
    assert cached is not None and _same_fields(cached, _derived(group, option))
    second = builtin_schema(group, option, target)  # from the cache
    assert second.__name__ == first.__name__
    assert _describe(second) == _describe(first)
    assert OmegaConf.to_yaml(OmegaConf.structured(second)) == OmegaConf.to_yaml(OmegaConf.structured(first))


def test_any_change_to_a_source_file_gives_another_key(tmp_path):
    package = tmp_path / "pkg"
    (package / "sub").mkdir(parents=True)
    (package / "a.py").write_text("X = 1\n")
    (package / "sub" / "b.py").write_text("def f(x=1): ...\n")
    key = schema_cache.source_key([str(package)])
    (package / "sub" / "b.py").write_text("def f(x=2): ...\n")
    edited = schema_cache.source_key([str(package)])
    (package / "sub" / "b.py").write_text("def f(x=1): ...\n")
    assert schema_cache.source_key([str(package)]) == key != edited
    (package / "c.py").write_text("")
    added = schema_cache.source_key([str(package)])
    (package / "c.py").rename(package / "sub" / "c.py")
    moved = schema_cache.source_key([str(package)])
    assert len({key, edited, added, moved}) == 4
    (package / "sub" / "c.py").unlink()
    (package / "__pycache__").mkdir()
    (package / "__pycache__" / "a.py").write_text("compiled")
    (package / "notes.txt").write_text("not code")
    assert schema_cache.source_key([str(package)]) == key
    assert schema_cache.source_key([str(tmp_path / "empty")]) is None  # no sources: nothing is cached


def test_a_cache_file_of_other_sources_or_a_corrupt_one_is_not_used(cache):
    builtin_schema("metric", "psnr", PSNR)
    (path,) = cache.glob("options-*.json")
    data = json.loads(path.read_text())
    good = json.dumps(data)
    for bad in ("{not json", json.dumps({**data, "key": "0" * 64}), json.dumps([data]),
                good.replace('"<class \'float\'>"', '"numpy.float32"'),
                good.replace("wfeval.metrics.reference.PSNR", "wfeval.metrics.reference.Other")):
        path.write_text(bad)
        assert schema_cache.load("metric", "psnr", PSNR) is None, bad[:80]
        schema = builtin_schema("metric", "psnr", PSNR)  # derived from the class again, and the file rewritten
        assert OmegaConf.to_yaml(OmegaConf.structured(schema)) == \
            OmegaConf.to_yaml(OmegaConf.structured(make_schema("psnr", _derived("metric", "psnr"), BASE_SCHEMAS["metric"])))
        assert _same_fields(schema_cache.load("metric", "psnr", PSNR), _derived("metric", "psnr"))
    path.write_text(good)
    assert schema_cache.load("metric", "psnr", PSNR) is not None
    assert schema_cache.load("metric", "ssim", PSNR) is None  # another id, or another class
    assert schema_cache.load("model", "psnr", PSNR) is None  # another group


def test_only_fields_json_gives_back_exactly_are_cached(cache):
    exact = [("_target_", str, "m.C"), ("a", Optional[List[int]], None), ("b", float, 1.0), ("c", List[Any], [1, "x"]),
             ("d", Any, {"k": [True, None]}), ("e", str, MISSING), ("f", str, "")]
    schema_cache.save("test", "exact", "m.C", exact)
    assert _same_fields(schema_cache.load("test", "exact", "m.C"), exact)
    for name, kind, default in (("t", List[int], (1, 2)), ("n", List[Any], [(1, 2)]), ("s", Any, {1, 2}),
                                ("k", Any, {1: "int key"}), ("u", complex, None)):
        schema_cache.save("test", "inexact", "m.C", [("_target_", str, "m.C"), (name, kind, default)])
        assert schema_cache.load("test", "inexact", "m.C") is None, name


def _literal(expr: ast.expr) -> bool:
    """Literals, or arithmetic on them (``1.0 / 255.0``)."""
    allowed = (ast.Constant, ast.BinOp, ast.UnaryOp, ast.operator, ast.unaryop, ast.Tuple, ast.List, ast.Dict, ast.Load)
    return all(isinstance(node, allowed) for node in ast.walk(expr))


def _literal_constant(module, name: str) -> bool:
    """``name`` is assigned a literal at the top of ``module`` (a wfeval module)."""
    if not module.__name__.startswith("wfeval."):
        return False
    for node in ast.parse(inspect.getsource(module)).body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(node, ast.AnnAssign) else []
        if any(isinstance(t, ast.Name) and t.id == name for t in targets):
            return _literal(node.value)
    return False


def test_builtin_option_defaults_are_literals_in_the_source():
    """The cache key covers wfeval's sources: a default computed at import (from the environment or
    another package) could change without them, so a built-in option's defaults are literals or
    literal constants of a wfeval module (``F.REPEAT_THRESHOLD``)."""
    for (group, metric_id), target in OPTIONS.items():
        inits = [k.__dict__["__init__"] for k in import_target(target).__mro__ if inspect.isfunction(k.__dict__.get("__init__"))]
        for init in inits:  # the class's own __init__ and those it passes **kwargs on to
            arguments = ast.parse(textwrap.dedent(inspect.getsource(init))).body[0].args
            for default in [*arguments.defaults, *(d for d in arguments.kw_defaults if d is not None)]:
                if isinstance(default, ast.Attribute) and isinstance(default.value, ast.Name):
                    module = init.__globals__[default.value.id]
                    assert inspect.ismodule(module) and _literal_constant(module, default.attr), \
                        (group, metric_id, ast.unparse(default))
                else:
                    assert _literal(default), (group, metric_id, ast.unparse(default))


def test_the_cache_keeps_the_most_recent_files(cache):
    cache.mkdir(parents=True)
    for index in range(schema_cache.KEEP + 5):
        (cache / f"options-{index:064d}.json").write_text("{}")
    builtin_schema("metric", "mse", builtin_targets("metric")["mse"])
    files = list(cache.glob("options-*.json"))
    assert len(files) == schema_cache.KEEP
    assert cache / f"options-{schema_cache.this_key()}.json" in files


def test_make_schema_gives_each_instance_its_own_list_default():
    schema = make_schema("x", [("_target_", str, "m.C"), ("names", List[str], ["a"])])
    first, second = schema(), schema()
    first.names.append("b")
    assert second.names == ["a"]
