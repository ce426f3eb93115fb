"""Register every structured-config schema with Hydra's ConfigStore: the core's and each plugin's.

Each plugin package (``wfeval.<package>``) that has a ``schemas`` module stores the schemas of
its built-in options with that module's ``register()`` (called when it is imported), the way Hydra's own plugins carry their
``config.py``. The packages are discovered, not listed: a new plugin package only adds its own
``schemas.py``. The lowest layer (:mod:`wfeval.config`) imports none of them.
"""

from __future__ import annotations

import functools
import importlib
import pkgutil

import wfeval
from wfeval.config.schema import register_core_schemas


@functools.lru_cache(maxsize=None)
def plugin_schema_modules() -> tuple[str, ...]:
    """``wfeval.<package>.schemas`` for every package of wfeval that has one (sorted)."""
    found = []
    for info in pkgutil.iter_modules(wfeval.__path__):
        # looked up in the package's folder: importing every package (numpy, ...) only to ask
        # would cost more than the rest of ``--help``
        spec = info.module_finder.find_spec(f"wfeval.{info.name}") if info.ispkg else None  # type: ignore[call-arg]
        locations = (spec.submodule_search_locations or []) if spec is not None else []
        if any(sub.name == "schemas" for sub in pkgutil.iter_modules(locations)):
            found.append(f"wfeval.{info.name}.schemas")
    return tuple(sorted(found))


def register_schemas() -> None:
    """Store the core schema and every plugin package's schemas (idempotent)."""
    register_core_schemas()
    for module in plugin_schema_modules():
        importlib.import_module(module).register()
