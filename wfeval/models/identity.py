"""A model's identity covers the code it runs (the generation cache keys on it).

:func:`code_identity` follows the imports of the model class's module, statically (its source
is parsed, nothing is executed): every module that is a file of the user's own (outside the
standard library and site-packages) is hashed, and its imports followed in turn; a module of an
installed distribution is identified by the distribution's name and version; the standard
library by nothing (Python's version is in the run's manifest). wfeval itself counts as an
installed distribution (its version), wherever it lives. So editing a helper module that the
model imports gives a new identity, and the cache does not serve the old generations.

Not followed: modules imported by name at run time (``importlib.import_module(variable)``),
and data files the code reads -- give those as config values or a ``fingerprint()`` method.
"""

from __future__ import annotations

import ast
import functools
import hashlib
import importlib.machinery
import inspect
import os
import sys
import sysconfig
from importlib import metadata
from pathlib import Path
from typing import Any

#: modules identified by their distribution's version even when their files are not installed
FRAMEWORK = ("wfeval",)
#: a user module graph larger than this is cut off (recorded as "truncated")
MAX_FILES = 500


@functools.lru_cache(maxsize=1)
def _library_roots() -> tuple[str, ...]:
    """Folders of the standard library and of installed packages (site-packages)."""
    import site

    paths = sysconfig.get_paths()
    roots = {paths.get(k) for k in ("stdlib", "platstdlib", "purelib", "platlib")}
    try:
        roots.update(site.getsitepackages())
        roots.add(site.getusersitepackages())
    except AttributeError:  # pragma: no cover - virtualenv's old site module
        pass
    roots.update(p for p in sys.path if p.endswith(("site-packages", "dist-packages")))
    return tuple(sorted({os.path.realpath(r) + os.sep for r in roots if r}))


def _is_library(path: str) -> bool:
    real = os.path.realpath(path)
    return any(real.startswith(root) for root in _library_roots())


@functools.lru_cache(maxsize=1)
def _distributions() -> dict[str, list[str]]:
    return metadata.packages_distributions()


@functools.lru_cache(maxsize=None)
def _distribution(top: str) -> str | None:
    """``name==version`` of the installed distribution providing top-level module ``top``."""
    for name in [top] if top in FRAMEWORK else _distributions().get(top, []):
        try:
            return f"{name}=={metadata.version(name)}"
        except metadata.PackageNotFoundError:
            continue
    return None


def _locate(name: str) -> str | None:
    """The file of module ``name`` without importing it (already imported modules: their file)."""
    module = sys.modules.get(name)
    if module is not None:
        return getattr(module, "__file__", None)
    path = None
    spec = None
    parts = name.split(".")
    for i in range(len(parts)):
        full = ".".join(parts[: i + 1])
        loaded = sys.modules.get(full)
        if loaded is not None:
            spec = getattr(loaded, "__spec__", None)
        else:
            try:
                spec = importlib.machinery.PathFinder.find_spec(full, path)
            except (ImportError, ValueError):
                return None
        if spec is None:
            return None
        path = spec.submodule_search_locations
        if path is None and i < len(parts) - 1:  # a module, not a package: "a.b" names an attribute
            return None
    return spec.origin if spec is not None and spec.has_location else None


def _imports(source: str, module: str, is_package: bool) -> set[str]:
    """Absolute names of the modules a source file imports (anywhere in it)."""
    try:
        tree = ast.parse(source)
    except SyntaxError:
        return set()
    package = module if is_package else module.rpartition(".")[0]
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level:
                base_parts = package.split(".") if package else []
                base_parts = base_parts[: len(base_parts) - (node.level - 1)] if node.level > 1 else base_parts
                base = ".".join(p for p in [*base_parts, node.module or ""] if p)
            else:
                base = node.module or ""
            if base:
                names.add(base)
                names.update(f"{base}.{alias.name}" for alias in node.names if alias.name != "*")
    return names


def code_identity(obj: Any) -> dict[str, Any]:
    """Identity of the code behind ``obj`` (an object or a class): user files by sha256 (path
    relative to their import root), installed distributions by ``name==version``."""
    cls = obj if inspect.isclass(obj) else type(obj)
    root_module = cls.__module__
    files: dict[str, str] = {}
    distributions: set[str] = set()
    queue = [root_module]
    seen: set[str] = set()
    hashed: set[str] = set()
    truncated = False
    while queue:
        name = queue.pop()
        if name in seen or not name:
            continue
        seen.add(name)
        if "." in name:  # importing a.b runs a/__init__.py first
            queue.append(name.rpartition(".")[0])
        top = name.partition(".")[0]
        if top in FRAMEWORK:
            distributions.add(_distribution(top) or top)
            continue
        if top in sys.stdlib_module_names or top in sys.builtin_module_names:
            continue
        origin = _locate(name)
        if not origin or not os.path.isfile(origin):
            continue  # a namespace package, a missing optional import, a built-in
        if _is_library(origin):
            distributions.add(_distribution(top) or f"{top} (unversioned)")
            continue
        if origin in hashed:
            continue
        if len(files) >= MAX_FILES:
            truncated = True
            continue
        hashed.add(origin)
        data = Path(origin).read_bytes()
        files[name] = hashlib.sha256(data).hexdigest()
        if origin.endswith(".py"):
            is_package = Path(origin).name == "__init__.py"
            queue.extend(_imports(data.decode("utf-8", errors="replace"), name, is_package))
    identity: dict[str, Any] = {"class": f"{root_module}.{cls.__qualname__}", "files": dict(sorted(files.items())),
                                "distributions": sorted(distributions)}
    if truncated:
        identity["truncated"] = True
    return identity
