"""A model's and a metric's identity cover the code they run (the generation cache and the
metric-result cache key on it), and every value they were given, callables included.

:func:`code_identity` follows the imports of the model class's module, statically (its source
is parsed, nothing is executed): every module that is a file of the user's own (outside the
standard library and site-packages) is hashed, and its imports followed in turn; a module of an
installed distribution is identified by the distribution's name and version; the standard
library by nothing (Python's version is in the run's manifest). wfeval itself counts as an
installed distribution (its version), wherever it lives. So editing a helper module that the
model imports gives a new identity, and the cache does not serve the old generations.

Not followed: modules imported by name at run time (``importlib.import_module(variable)``),
and data files the code reads -- give those as config values or a ``fingerprint()`` method.

:func:`value_identity` is how an option value enters an identity: a callable by its qualified name
and its code (never just its type), an array by its content, an object by its class's code and
its state.
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
from typing import Any, Mapping, Sequence

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


def _module_code(root_module: str) -> tuple[dict[str, str], list[str], bool]:
    """(user files by sha256, distributions, truncated) of a module and the modules it imports."""
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
    return dict(sorted(files.items())), sorted(distributions), truncated


def code_identity(obj: Any) -> dict[str, Any]:
    """Identity of the code behind ``obj`` (an object or a class): user files by sha256 (path
    relative to their import root), installed distributions by ``name==version``."""
    cls = obj if inspect.isclass(obj) else type(obj)
    files, distributions, truncated = _module_code(cls.__module__)
    identity: dict[str, Any] = {"class": f"{cls.__module__}.{cls.__qualname__}", "files": files,
                                "distributions": distributions}
    if truncated:
        identity["truncated"] = True
    return identity


# -- option values: plain data, arrays, callables, objects ----------------------------------------
MAX_DEPTH = 6  # nested objects followed this deep (deeper: their type only)


def _framework(module: str | None) -> bool:
    return (module or "").partition(".")[0] in FRAMEWORK


def _bytecode(code: Any) -> str:
    """sha256 of a code object: its instructions, names and constants (nested functions included)."""
    digest = hashlib.sha256()
    stack = [code]
    while stack:
        item = stack.pop()
        digest.update(item.co_code)
        digest.update(repr(item.co_names).encode())
        for const in item.co_consts:
            if inspect.iscode(const):
                stack.append(const)
            else:
                digest.update(repr(const).encode("utf-8", errors="replace"))
    return digest.hexdigest()


def callable_identity(fn: Any, _seen: frozenset[int] = frozenset(), _depth: int = 0) -> dict[str, Any]:
    """Identity of a function-valued option: its qualified name and the code behind it (the files of
    its module and what they import, as :func:`code_identity`), plus what it carries: a function's
    bytecode, defaults and closure values, a ``functools.partial``'s arguments, a bound method's
    object, a callable object's class and state. Never just its type."""
    if _is_partial(fn):
        return {"partial": callable_identity(fn.func, _seen, _depth + 1),
                "args": [value_identity(a, _seen, _depth + 1) for a in fn.args],
                "keywords": {k: value_identity(v, _seen, _depth + 1) for k, v in sorted(fn.keywords.items())}}
    if inspect.ismethod(fn):
        return {"method": callable_identity(fn.__func__, _seen, _depth + 1),
                "self": value_identity(fn.__self__, _seen, _depth + 1)}
    if inspect.isclass(fn):
        return {"class": code_identity(fn)}
    module = getattr(fn, "__module__", None)
    qualname = getattr(fn, "__qualname__", None) or getattr(fn, "__name__", None)
    if inspect.isfunction(fn) or inspect.isbuiltin(fn):
        out: dict[str, Any] = {"callable": f"{module}.{qualname}"}
        if module:
            files, distributions, truncated = _module_code(module)
            out["code"] = {"files": files, "distributions": distributions, **({"truncated": True} if truncated else {})}
        if inspect.isfunction(fn) and not _framework(module):
            out["bytecode"] = _bytecode(fn.__code__)
            if fn.__defaults__:
                out["defaults"] = value_identity(list(fn.__defaults__), _seen, _depth + 1)
            if fn.__kwdefaults__:
                out["kwdefaults"] = value_identity(dict(fn.__kwdefaults__), _seen, _depth + 1)
            if fn.__closure__:
                cells = []
                for cell in fn.__closure__:
                    try:
                        cells.append(value_identity(cell.cell_contents, _seen, _depth + 1))
                    except ValueError:  # an empty cell
                        cells.append(None)
                out["closure"] = cells
        return out
    return {"object": value_identity(fn, _seen, _depth, as_callable=False)}


def _array_identity(value: Any) -> dict[str, Any]:
    import numpy as np  # noqa: PLC0415 - only when an option holds an array
    array = np.ascontiguousarray(value)
    digest = hashlib.sha256(array.tobytes()).hexdigest()
    return {"ndarray": list(array.shape), "dtype": str(array.dtype), "sha256": digest}


def value_identity(value: Any, _seen: frozenset[int] = frozenset(), _depth: int = 0, *,
                   as_callable: bool = True) -> Any:
    """A value as an identity holds it: plain data as itself; an array by its content hash; a
    callable by :func:`callable_identity`; a dataclass by its fields; any other object by its class's
    code and its state (its attributes, or its ``state_dict()``), followed :data:`MAX_DEPTH` deep."""
    if isinstance(value, (str, int, float, bool)) or value is None:
        return value
    if id(value) in _seen or _depth > MAX_DEPTH:
        return f"<{type(value).__module__}.{type(value).__qualname__}>"
    seen = _seen | {id(value)}
    if isinstance(value, Mapping):
        return {str(k): value_identity(v, seen, _depth + 1) for k, v in value.items()}
    if isinstance(value, (bytes, bytearray)):
        return {"bytes": hashlib.sha256(value).hexdigest()}
    if isinstance(value, (list, tuple, set, frozenset, Sequence)):  # also a ListConfig
        items = [value_identity(v, seen, _depth + 1) for v in value]
        return sorted(items, key=repr) if isinstance(value, (set, frozenset)) else items
    if hasattr(value, "__array_interface__") and getattr(value, "dtype", None) is not None \
            and value.dtype.kind != "O":
        return _array_identity(value)
    if callable(getattr(value, "detach", None)) and callable(getattr(value, "numpy", None)):  # a torch tensor
        try:
            return _array_identity(value.detach().cpu().numpy())
        except Exception:  # noqa: BLE001 - an exotic tensor: its type below
            pass
    if hasattr(value, "__dataclass_fields__") and not inspect.isclass(value):
        return {"__type__": type(value).__qualname__,
                **{k: value_identity(getattr(value, k), seen, _depth + 1) for k in value.__dataclass_fields__}}
    if as_callable and (inspect.isroutine(value) or inspect.isclass(value) or _is_partial(value)):
        return callable_identity(value, seen, _depth)
    cls = type(value)
    out: dict[str, Any] = {"__type__": f"{cls.__module__}.{cls.__qualname__}"}
    name = getattr(value, "__qualname__", None) or getattr(value, "__name__", None)
    if isinstance(name, str):  # e.g. a numpy ufunc: np.add is not np.subtract
        out["name"] = name
    if not _framework(cls.__module__):
        out["code"] = code_identity(cls)
    state_dict = getattr(value, "state_dict", None)
    if callable(state_dict):  # a torch module or optimizer: its weights
        try:
            out["state_dict"] = value_identity(dict(state_dict()), seen, _depth + 1)
        except Exception:  # noqa: BLE001 - a state_dict that needs arguments: the attributes below
            pass
    attributes = getattr(value, "__dict__", None)
    if isinstance(attributes, dict) and "state_dict" not in out:
        items = sorted(attributes.items(), key=lambda kv: str(kv[0]))
        out["state"] = {str(k): value_identity(v, seen, _depth + 1) for k, v in items}
    return out


def _is_partial(value: Any) -> bool:
    return type(value).__name__ == "partial" and type(value).__module__ == "functools"
