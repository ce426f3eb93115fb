"""The package's shape, checked from the source: imports point one way, pipeline modules stay small.

The layers (docs/architecture.md): a module may import its own unit (top-level package or
module of ``wfeval``) and units of lower layers, never a unit of the same or a higher layer —
except the command modules, which sit on top and may call each other. Lazy imports inside
functions count too.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "wfeval"

LAYERS: list[set[str]] = [
    {"api", "utils", "conf"},  # contracts; conf/ is data; hashing, thread pools, malloc, progress
    {"config", "stats"},  # config schemas/errors, maths
    {"storage"},
    {"io"},
    {"features"},  # I3D and its weights
    {"functional"},  # formulas (numpy / torch)
    {"metrics", "models"},  # metric classes; the model contract and generic adapters
    {"benchmarks"},  # families: datasets, simulators, their baselines
    {"protocols"},  # drivers (autoregressive, closed loop, planning), policies, planner
    {"results"},  # rows → aggregates, slices, scorecard, evidence, results.json; cached rows
    {"report"},  # renderings of results
    {"pipeline"},  # build → generate → score → results → write
    {"schemas"},  # registers every plugin package's config schemas
    {"recipes"},  # learned baselines apart from the core: training app, model=learned
    {"trackers"},  # experiment trackers as Hydra callbacks (MLflow, TensorBoard, W&B): read run folders
    {"cli", "__main__", "replay", "merge", "compare", "export", "export_dataset", "resume", "store", "__init__"},
]
COMMANDS = LAYERS[-1]
MAX_PIPELINE_LINES = 300


SHIMS = {"wfeval.features.fetch", "wfeval.recipes.train", "wfeval.report.__main__"}  # command spellings


def _unit(module: str) -> str:
    if module in SHIMS:
        return "cli"
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else "__init__"


def _layer(unit: str) -> int:
    for i, layer in enumerate(LAYERS):
        if unit in layer:
            return i
    raise AssertionError(f"wfeval.{unit} is in no layer: add it to LAYERS here and to docs/architecture.md")


def _imports(path: Path) -> list[tuple[str, int]]:
    tree = ast.parse(path.read_text(encoding="utf-8"))
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            found += [(node.module, node.lineno)]
            if node.module == "wfeval":  # from wfeval import x: x is the unit
                found += [(f"wfeval.{alias.name}", node.lineno) for alias in node.names]
    return [(name, line) for name, line in found if name.startswith("wfeval.")]


def test_imports_point_only_to_lower_layers():
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        rel = path.relative_to(ROOT).with_suffix("")
        source = _unit(".".join(rel.parts))
        for target_module, line in _imports(path):
            target = _unit(target_module)
            if target == source or (source in COMMANDS and target in COMMANDS):
                continue
            if _layer(target) >= _layer(source):
                upward.append(f"{path.relative_to(ROOT)}:{line} imports {target_module} "
                              f"(layer {_layer(target)} from layer {_layer(source)})")
    assert not upward, "imports that do not point down:\n" + "\n".join(upward)


def test_every_unit_of_the_package_has_a_layer():
    units = {p.stem if p.is_file() else p.name for p in PACKAGE.iterdir()
             if (p.suffix == ".py" or (p.is_dir() and (p / "__init__.py").exists()))}
    for unit in units:
        _layer(unit)


def test_no_pipeline_module_is_over_300_lines():
    sizes = {p.name: len(p.read_text(encoding="utf-8").splitlines()) for p in (PACKAGE / "pipeline").glob("*.py")}
    assert max(sizes.values()) <= MAX_PIPELINE_LINES, sizes


def test_the_config_layer_imports_no_plugin_package():
    for path in (PACKAGE / "config").glob("*.py"):
        targets = {_unit(name) for name, _ in _imports(path)}
        assert targets <= {"config", "conf", "api"}, (path.name, targets)
