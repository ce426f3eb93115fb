"""The package's shape, checked from the source against the tables of docs/architecture.md.

docs/architecture.md holds the one copy of the layers (which unit may import which), the size cap
of each package's modules and the benchmark families; this test reads those tables and checks:

- every import points to the same unit or a lower layer — absolute, relative (``from ..x``),
  lazy (inside functions) and by a literal string (``importlib.import_module("wfeval.x")``,
  ``import_target("wfeval.x.Y")``, ``runpy.run_module``) alike; the commands on top may call each other;
- benchmark families import only the shared floor of ``wfeval/benchmarks`` (``base``, ``recorded``),
  never each other;
- the modules of one package import each other without a cycle (lazy imports included);
- no module is longer than the cap of its package;
- ``wfeval/benchmarks/base.py`` holds the benchmark contract only: a task's interface is in ``wfeval/tasks/``;
- the top level of ``wfeval/`` holds only the package face, the entry and command shims.

Each rule has a test that feeds it a made-up module and expects it to fail.
"""

from __future__ import annotations

import ast
import functools
import re
from dataclasses import dataclass
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "wfeval"
DOC = ROOT / "docs" / "architecture.md"
STRING_IMPORTERS = {"import_module", "__import__", "import_target", "run_module", "find_spec"}


def _table(heading: str) -> list[list[str]]:
    """The rows of the first Markdown table under ``heading`` in docs/architecture.md (cells stripped)."""
    text = DOC.read_text(encoding="utf-8")
    start = text.index(heading)
    rows = []
    for line in text[start:].splitlines()[1:]:
        if line.startswith("|"):
            cells = [c.strip() for c in line.strip().strip("|").split("|")]
            if not set("".join(cells)) <= set("-: "):
                rows.append(cells)
        elif rows:
            break
    return rows[1:]  # without the header


def _names(cell: str) -> list[str]:
    return re.findall(r"`([\w.]+)`", cell)


@dataclass(frozen=True)
class Shape:
    layers: dict[str, int]  # unit -> layer
    caps: dict[str, int]  # unit -> max lines of a module
    floor: set[str]  # wfeval.benchmarks units every family may import
    families: set[str]

    @classmethod
    def from_doc(cls) -> "Shape":
        layers, caps = {}, {}
        for layer, units, cap, _ in _table("## Layers"):
            for unit in _names(units):
                layers[unit], caps[unit] = int(layer), int(cap)
        floor, families = set(), set()
        for kind, units, _ in _table("## Benchmark families"):
            (floor if kind == "shared floor" else families).update(_names(units))
        return cls(layers, caps, floor, families)


SHAPE = Shape.from_doc()
COMMANDS = {u for u, layer in SHAPE.layers.items() if layer == max(SHAPE.layers.values())}


@functools.cache
def parsed(path: Path) -> ast.Module:
    """The syntax tree of a file of the real tree, parsed once a process: every rule walks the same trees
    (only read, never changed); a made-up module's source is parsed by the rule itself."""
    return ast.parse(path.read_text(encoding="utf-8"))


def _module_name(path: Path) -> str:
    rel = path.relative_to(ROOT).with_suffix("")
    parts = list(rel.parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def _resolve(module: str, node: ast.ImportFrom, is_package: bool) -> str:
    """The absolute name of a (possibly relative) ``from`` import in ``module``."""
    if not node.level:
        return node.module or ""
    base = module.split(".")
    base = base[: len(base) - node.level + (1 if is_package else 0)]
    return ".".join(base + ([node.module] if node.module else []))


def _type_checking(node: ast.AST) -> bool:
    return isinstance(node, ast.If) and (getattr(node.test, "id", None) == "TYPE_CHECKING"
                                         or getattr(node.test, "attr", None) == "TYPE_CHECKING")


def _walk(tree: ast.AST, typing_blocks: bool) -> list[ast.AST]:
    out, todo = [], [tree]
    while todo:
        node = todo.pop()
        out.append(node)
        if not typing_blocks and _type_checking(node):
            todo.extend(node.orelse)
            continue
        todo.extend(ast.iter_child_nodes(node))
    return out


def imports(path: Path, source: str | None = None, typing_blocks: bool = True) -> list[tuple[str, int]]:
    """Every ``wfeval.*`` module ``path`` imports, with the line: statements (relative ones resolved)
    and literal strings given to an importer function; ``typing_blocks=False`` leaves out the
    imports under ``if TYPE_CHECKING:`` (never executed)."""
    module = _module_name(path)
    tree = ast.parse(source) if source is not None else parsed(path)
    found = []
    for node in _walk(tree, typing_blocks):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            target = _resolve(module, node, path.name == "__init__.py")
            if target != "wfeval":  # from wfeval import x: the unit is x
                found.append((target, node.lineno))
            found += [(f"{target}.{alias.name}", node.lineno) for alias in node.names]
        elif isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
            if name in STRING_IMPORTERS and node.args and isinstance(node.args[0], ast.Constant) \
                    and isinstance(node.args[0].value, str):
                found.append((node.args[0].value.replace(":", "."), node.lineno))
    return [(name, line) for name, line in found if name.startswith("wfeval.")]  # `import wfeval`: the package face


def _unit(module: str) -> str:
    if module in SHAPE.layers:  # a module the table names by its full name (a command shim)
        return module
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _family(module: str) -> str | None:
    parts = module.split(".")
    return parts[2] if len(parts) > 2 and parts[1] == "benchmarks" else None


def _layer(unit: str) -> int:
    if unit not in SHAPE.layers:
        raise AssertionError(f"wfeval.{unit} is in no layer: add it to the table of docs/architecture.md")
    return SHAPE.layers[unit]


def _known(target: str) -> str | None:
    """The unit of ``target`` when it is one (``from wfeval.x import name`` also lists ``wfeval.x.name``)."""
    unit = _unit(target)
    return unit if unit in SHAPE.layers or (PACKAGE / unit).exists() or (PACKAGE / f"{unit}.py").exists() else None


def layer_violations(path: Path, source: str | None = None) -> list[str]:
    module = _module_name(path)
    source_unit = _unit(module) if module != "wfeval" else "__init__"
    out = []
    for target, line in imports(path, source):
        unit = _known(target)
        if unit is None or unit == source_unit or (source_unit in COMMANDS and unit in COMMANDS):
            continue
        if _layer(unit) >= _layer(source_unit):
            out.append(f"{path.relative_to(ROOT)}:{line} imports {target} "
                       f"(layer {_layer(unit)} from layer {_layer(source_unit)})")
    return out


def family_violations(path: Path, source: str | None = None) -> list[str]:
    module = _module_name(path)
    own = _family(module)
    if own is None:
        return []
    out = []
    for target, line in imports(path, source):
        other = _family(target)
        if other is None or other == own or other in SHAPE.floor:
            continue
        if (PACKAGE / "benchmarks" / other).exists() or (PACKAGE / "benchmarks" / f"{other}.py").exists():
            if own in SHAPE.floor:
                out.append(f"{path.relative_to(ROOT)}:{line}: the shared floor imports the family {other} ({target})")
            else:
                out.append(f"{path.relative_to(ROOT)}:{line}: family {own} imports family {other} ({target})")
    return out


def _package_modules(package: Path) -> dict[str, Path]:
    """The package's modules but its ``__init__`` (which re-exports them: not a cycle by itself)."""
    return {_module_name(p): p for p in package.glob("*.py") if p.name != "__init__.py"}


def cycles(package: Path, sources: dict[str, str] | None = None) -> list[list[str]]:
    """Import cycles among the modules of one package (each cycle as a list of module names); lazy
    imports count, imports only for type checkers do not."""
    sources = sources or {}
    modules = _package_modules(package)
    for name in sources:
        modules.setdefault(name, package / f"{name.rsplit('.', 1)[-1]}.py")
    def module_of(name: str) -> str | None:  # `wfeval.x.mod` or `wfeval.x.mod.Name` -> `wfeval.x.mod`
        return name if name in modules else name.rsplit(".", 1)[0] if name.rsplit(".", 1)[0] in modules else None

    graph = {m: sorted({t for name, _ in imports(p, sources.get(m), typing_blocks=False)
                        if (t := module_of(name)) and t != m})
             for m, p in modules.items()}
    found, state = [], {}

    def visit(node: str, stack: list[str]) -> None:
        state[node] = "open"
        for nxt in graph[node]:
            if state.get(nxt) == "open":
                found.append(stack[stack.index(nxt):] + [nxt])
            elif nxt not in state:
                visit(nxt, stack + [nxt])
        state[node] = "done"

    for m in sorted(graph):
        if m not in state:
            visit(m, [m])
    return found


@pytest.fixture(autouse=True, scope="module")
def _trees_freed_after_this_file():
    yield
    parsed.cache_clear()  # some 70 MB of syntax trees, not kept for the rest of a worker's files


def _all_packages() -> list[Path]:
    return sorted({p.parent for p in PACKAGE.rglob("__init__.py")})


# --- the rules on the real tree -------------------------------------------------------------------


def test_imports_point_only_to_lower_layers():
    upward = [v for path in sorted(PACKAGE.rglob("*.py")) for v in layer_violations(path)]
    assert not upward, "imports that do not point down:\n" + "\n".join(upward)


def test_benchmark_families_never_import_each_other():
    crossing = [v for path in sorted((PACKAGE / "benchmarks").rglob("*.py")) for v in family_violations(path)]
    assert not crossing, "\n".join(crossing)


def test_the_modules_of_each_package_import_each_other_without_a_cycle():
    found = {str(p.relative_to(ROOT)): cycles(p) for p in _all_packages()}
    assert not {k: v for k, v in found.items() if v}, found


def test_every_unit_of_the_package_has_a_layer_and_every_family_a_row():
    units = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
             if (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists()))}
    for unit in units:
        _layer(unit)
    families = {p.name for p in (PACKAGE / "benchmarks").iterdir() if p.is_dir() and (p / "__init__.py").exists()}
    assert families <= SHAPE.families | SHAPE.floor, f"add to the families table: {families - SHAPE.families}"


def test_no_module_is_longer_than_the_cap_of_its_package():
    over = []
    for path in sorted(PACKAGE.rglob("*.py")):
        unit = _unit(_module_name(path))
        lines = len(path.read_text(encoding="utf-8").splitlines())
        if unit in SHAPE.caps and lines > SHAPE.caps[unit]:
            over.append(f"{path.relative_to(ROOT)}: {lines} lines > {SHAPE.caps[unit]} ({unit})")
    assert not over, "\n".join(over)


def test_the_top_level_holds_the_face_the_entry_and_command_shims():
    for path in sorted(PACKAGE.glob("*.py")):
        if path.name == "__init__.py":
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        targets = {t for t, _ in imports(path)}
        assert len(lines) <= 10 and targets and all(t.startswith("wfeval.cli.") for t in targets), \
            f"{path.name} is not a command shim (<= 10 lines, importing from wfeval.cli only)"


#: the benchmark integration contract (wfeval/benchmarks/base.py): what every family's adapter, runtime hook and
#: scorer offer the pipeline; what a family offers for one task is that task's, in wfeval/tasks/<task>.py
BENCHMARK_CONTRACT = {"BenchmarkAdapter", "RunContext", "BenchmarkRuntimeHook", "BenchmarkScorer"}


def top_level_classes(source: str) -> set[str]:
    return {node.name for node in ast.parse(source).body if isinstance(node, ast.ClassDef)}


def test_the_benchmark_contract_holds_no_task_interface():
    base = (PACKAGE / "benchmarks" / "base.py").read_text(encoding="utf-8")
    assert top_level_classes(base) == BENCHMARK_CONTRACT, "a task's interface goes in wfeval/tasks/<task>.py"
    tasks = {p.stem for p in (PACKAGE / "tasks").glob("*.py")}
    assert {"memory", "policy_evaluation", "probing", "goal_reaching", "controllability"} <= tasks


def test_a_task_interface_in_the_benchmark_contract_is_caught():
    base = (PACKAGE / "benchmarks" / "base.py").read_text(encoding="utf-8")
    added = base + "\n\nclass RevisitPlanner(Protocol):\n    def revisit_plan(self, request, gaps): ...\n"
    assert top_level_classes(added) - BENCHMARK_CONTRACT == {"RevisitPlanner"}


def pattern_imports(source: str | ast.AST) -> list[int]:
    """Lines that import a wfeval module by a name built at run time (``import_module(f"wfeval.x.{name}")``,
    ``"wfeval.x." + name``): code found by a name pattern instead of the registries (docs/architecture.md)."""
    found = []
    for node in ast.walk(source if isinstance(source, ast.AST) else ast.parse(source)):
        if not isinstance(node, ast.Call) or not node.args:
            continue
        func = node.func
        name = func.attr if isinstance(func, ast.Attribute) else func.id if isinstance(func, ast.Name) else ""
        first = node.args[0]
        while isinstance(first, ast.BinOp):
            first = first.left
        if isinstance(first, ast.JoinedStr):
            first = first.values[0] if first.values else None
        if name in STRING_IMPORTERS and node.args[0] is not first and isinstance(first, ast.Constant) \
                and str(first.value).startswith("wfeval"):
            found.append(node.lineno)
    return found


def test_no_wfeval_module_is_imported_by_a_name_pattern():
    found = [f"{p.relative_to(ROOT)}:{line}" for p in sorted(PACKAGE.rglob("*.py"))
             for line in pattern_imports(parsed(p))]
    assert not found, "import through the registries (wfeval.config.plugins), not a built name:\n" + "\n".join(found)


def test_an_import_by_a_name_pattern_is_caught():
    assert pattern_imports("import importlib\ndef f(family):\n"
                           "    return importlib.import_module(f'wfeval.benchmarks.{family}.simulator')\n") == [3]
    assert pattern_imports("def f(x):\n    return import_target('wfeval.models.' + x)\n") == [2]
    assert pattern_imports("def f(target):\n    return import_target(target)\n") == []


# --- each rule fails for what it must catch --------------------------------------------------------


def test_a_relative_upward_import_is_caught():
    path = PACKAGE / "metrics" / "outcome_columns.py"
    assert layer_violations(path, "from ..pipeline import runner\n") == [
        "wfeval/metrics/outcome_columns.py:1 imports wfeval.pipeline (layer 11 from layer 6)",
        "wfeval/metrics/outcome_columns.py:1 imports wfeval.pipeline.runner (layer 11 from layer 6)"]
    assert layer_violations(path, "from . import base\nfrom .base import BaseMetric\n") == []


def test_an_import_of_a_higher_layer_by_string_is_caught():
    path = PACKAGE / "api" / "_base.py"
    source = "import importlib\ndef f():\n    return importlib.import_module('wfeval.pipeline.runner')\n"
    assert layer_violations(path, source) == ["wfeval/api/_base.py:3 imports wfeval.pipeline.runner "
                                              "(layer 11 from layer 0)"]
    assert layer_violations(path, "from wfeval.config.plugins import import_target\n"
                                  "x = import_target('wfeval.report.table:fmt')\n")


def test_an_import_between_two_benchmark_families_is_caught():
    path = PACKAGE / "benchmarks" / "gridworld" / "baselines.py"
    assert family_violations(path, "def f():\n    from wfeval.benchmarks.atari import simulator\n") == [
        "wfeval/benchmarks/gridworld/baselines.py:2: family gridworld imports family atari "
        "(wfeval.benchmarks.atari)",
        "wfeval/benchmarks/gridworld/baselines.py:2: family gridworld imports family atari "
        "(wfeval.benchmarks.atari.simulator)"]
    assert family_violations(path, "from wfeval.benchmarks.base import input_error\n") == []


def test_a_cycle_inside_a_package_is_caught_even_through_a_lazy_import():
    package = PACKAGE / "models"
    found = cycles(package, {"wfeval.models.command": "from wfeval.models import command_steps\n",
                             "wfeval.models.command_steps": "def f():\n    from wfeval.models.command import x\n"})
    assert ["wfeval.models.command", "wfeval.models.command_steps", "wfeval.models.command"] in found


def test_a_module_over_the_cap_of_its_package_is_caught(tmp_path, monkeypatch):
    cap = SHAPE.caps["pipeline"]
    module = PACKAGE / "pipeline" / "zz_too_long_for_the_test.py"
    module.write_text("x = 1\n" * (cap + 1), encoding="utf-8")
    try:
        with pytest.raises(AssertionError, match=f"zz_too_long_for_the_test.py: {cap + 1} lines > {cap}"):
            test_no_module_is_longer_than_the_cap_of_its_package()
    finally:
        module.unlink()


def test_only_the_run_directory_spells_the_names_of_run_folder_files():
    """storage/rundir.FILES owns every file name of a run (and sweep) folder; a literal elsewhere
    would let two modules disagree about where a run keeps its rows."""
    from wfeval.storage.rundir import FILES

    names = {v for k, v in vars(type(FILES)).items() if isinstance(v, str) and not k.startswith("_")
             and ("." in v or v in ("replay", "merged"))}
    names.discard(".hydra")
    spelled = []
    for path in sorted(PACKAGE.rglob("*.py")):
        if path.relative_to(PACKAGE).as_posix() == "storage/rundir.py":
            continue
        for node in ast.walk(parsed(path)):
            if isinstance(node, ast.Constant) and node.value in names:
                spelled.append(f"{path.relative_to(ROOT)}:{node.lineno}: {node.value!r} (use storage.rundir.FILES)")
    assert not spelled, "\n".join(spelled)


# -- every file write goes through storage/safe_io.py ---------------------------------------------

WRITE_MODES = set("wax+")
#: module (relative to wfeval/) -> {what it may do, and why}: the few writes outside safe_io
WRITE_ALLOWED = {
    "storage/safe_io.py": {"*": "the one home of file writes"},
    "storage/rundir.py": {"os.replace": "RunDirectory.replace renames a run's own finished partial file into place "
                                        "(a rename inside a folder check_no_links has checked; nothing is written)"},
    "pipeline/score.py": {"os.replace": "metrics.jsonl is compacted row by row into a temporary opened with "
                                        "open_nofollow, then renamed: a streamed rewrite, too large to hold whole"},
    "config/schema_cache.py": {"os.replace": "config (layer 1) cannot import storage (layer 2); the schema cache "
                                             "writes its own temporary and renames it",
                               "tempfile.NamedTemporaryFile": "the same write"},
}


def _mode(call: ast.Call, position: int) -> str:
    for keyword in call.keywords:
        if keyword.arg == "mode" and isinstance(keyword.value, ast.Constant):
            return str(keyword.value.value)
    if len(call.args) > position and isinstance(call.args[position], ast.Constant):
        return str(call.args[position].value)
    return "r"


def _is_name(node: ast.AST | None, names: set[str]) -> bool:
    return isinstance(node, ast.Name) and node.id in names


def file_writes(tree: ast.AST) -> list[tuple[int, str]]:
    """(line, what) of every call that writes a file by itself: ``Path.write_text/write_bytes``,
    ``open``/``Path.open`` in a writing mode, ``np.save*``/``torch.save`` to a path (an in-memory
    buffer is fine), ``os.replace``/``os.rename``, ``tempfile.mkstemp``/``NamedTemporaryFile``,
    ``shutil.copy*``/``move`` (to an ``atomic_target``'s ``tmp``: fine)."""
    found = []
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        func, what = node.func, None
        owner = func.value.id if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name) else None
        attr = func.attr if isinstance(func, ast.Attribute) else None
        if attr in ("write_text", "write_bytes") and len(node.args) == 1:  # RunDirectory.write_text(name, text)
            what = attr
        elif isinstance(func, ast.Name) and func.id == "open" and WRITE_MODES & set(_mode(node, 1)):
            what = "open"
        elif attr == "open" and owner not in ("os", "av", "h5py", "zipfile", "tarfile", "Image") \
                and WRITE_MODES & set(_mode(node, 0)):
            what = ".open"
        elif owner in ("np", "numpy") and attr in ("save", "savez", "savez_compressed"):
            what = None if _is_name(node.args[0] if node.args else None, {"buffer", "handle"}) else f"np.{attr}"
        elif owner == "torch" and attr == "save":
            target = node.args[1] if len(node.args) > 1 else None
            what = None if _is_name(target, {"buffer", "handle"}) else "torch.save"
        elif owner == "os" and attr in ("replace", "rename"):
            what = f"os.{attr}"
        elif owner == "tempfile" and attr in ("mkstemp", "NamedTemporaryFile"):
            what = f"tempfile.{attr}"
        elif owner == "shutil" and attr in ("copy", "copy2", "copyfile", "copytree", "move"):
            what = None if _is_name(node.args[1] if len(node.args) > 1 else None, {"tmp"}) else f"shutil.{attr}"
        if what:
            found.append((node.lineno, what))
    return found


def test_every_file_write_goes_through_safe_io():
    """docs/architecture.md: files are written only through storage/safe_io.py (atomically, never
    through a link); the exceptions are listed in WRITE_ALLOWED with their reason."""
    outside = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(PACKAGE).as_posix()
        allowed = WRITE_ALLOWED.get(rel, {})
        for line, what in file_writes(parsed(path)):
            if "*" not in allowed and what not in allowed:
                outside.append(f"wfeval/{rel}:{line}: {what} (write through wfeval.storage.safe_io)")
    assert not outside, "\n".join(outside)


@pytest.mark.parametrize("source", [
    "from pathlib import Path\nPath('x').write_text('y')\n",
    "open('x', 'w').write('y')\n",
    "import numpy as np\nnp.save('x.npy', [1])\n",
    "import torch\ntorch.save({}, 'x.pt')\n",
    "import os\nos.replace('a', 'b')\n",
    "from pathlib import Path\nPath('x').open(mode='ab')\n",
])
def test_a_file_write_outside_safe_io_is_caught(source):
    assert file_writes(ast.parse(source))


def test_writes_to_a_buffer_or_a_run_directory_are_not_file_writes():
    source = ("import io, numpy as np, torch\nbuffer = io.BytesIO()\nnp.save(buffer, [1])\ntorch.save({}, buffer)\n"
              "rundir.write_text('results.md', 'x')\nopen('x').read()\n")
    assert file_writes(ast.parse(source)) == []


# --- Hydra through its public doors (docs/architecture.md, "Composition") ------------------------

HYDRA_SOURCES = [*sorted(PACKAGE.rglob("*.py")), *sorted((ROOT / "hydra_plugins").rglob("*.py"))]


def hydra_violations(path: Path, source: str | None = None) -> list[str]:
    """A private Hydra module or name anywhere (``hydra._internal``, ``_``-prefixed names, ``Singleton``,
    a write into ``ConfigStore.repo``); Hydra's job state (``HydraConfig``) outside ``wfeval/cli/``."""
    under_cli = path.is_relative_to(PACKAGE / "cli")
    found = []
    for node in _walk(parsed(path) if source is None else ast.parse(source), typing_blocks=True):
        names: list[tuple[str, str]] = []
        if isinstance(node, ast.Import):
            names = [(alias.name, alias.name) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module:
            names = [(f"{node.module}.{alias.name}", alias.name) for alias in node.names]
        elif isinstance(node, ast.Attribute) and node.attr in ("repo", "_instances", "_internal"):
            names = [(node.attr, node.attr)]
        for full, last in names:
            if not (full.startswith("hydra.") or full in ("repo", "_instances", "_internal")):
                continue
            private = any(part.startswith("_") for part in full.split(".")) or last == "Singleton" or \
                full.endswith(".singleton") or full in ("repo", "_instances", "_internal")
            if private:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: {full} (private Hydra)")
            elif last == "HydraConfig" and not under_cli:
                found.append(f"{path.relative_to(ROOT)}:{node.lineno}: HydraConfig below wfeval/cli/ "
                             "(the boundary hands over choices, overrides and search path: RunConfig.job)")
    return found


def test_hydra_is_reached_only_through_its_public_api_and_its_job_state_only_in_cli():
    found = [v for path in HYDRA_SOURCES for v in hydra_violations(path)]
    assert not found, "\n".join(found)


def test_a_private_hydra_import_or_job_state_below_cli_is_caught():
    below = PACKAGE / "pipeline" / "x.py"
    assert hydra_violations(below, "from hydra._internal.utils import get_args_parser\n")
    assert hydra_violations(below, "def f():\n    from hydra.core.hydra_config import HydraConfig\n")
    assert hydra_violations(below, "from hydra.core.singleton import Singleton\n")
    assert hydra_violations(below, "def f(cs):\n    cs.repo['x'] = 1\n")
    assert not hydra_violations(PACKAGE / "cli" / "x.py", "from hydra.core.hydra_config import HydraConfig\n")
    assert not hydra_violations(below, "from hydra import compose\nfrom hydra.core.global_hydra import GlobalHydra\n")
