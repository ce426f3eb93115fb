"""What composing wfeval's config is a function of, hashed into one key: the caches of what a composition
gives (``--help``'s text, :mod:`wfeval.cli.help_cache`; a plain run's composed config,
:mod:`wfeval.pipeline.compose_cache`) are kept under it. Hashed: the command line, wfeval's sources
(the derived schemas, the served configs; :func:`wfeval.config.schema_cache.source_key`, hashed once a
process), the Python,
Hydra and OmegaConf versions, every config file (path and bytes) under the given folders and those a
``hydra.searchpath=[file://...]`` override adds, the ``WFEVAL_*`` / ``HYDRA_*`` environment variables
(``${oc.env:...}`` in the configs), the installed Hydra plugins (a search-path plugin adds config files)
and the installed wfeval plugin packages (entry points, versions, config files). Any change gives another
key.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Iterable, Sequence


def config_inputs(digest: "hashlib._Hash", argv: Sequence[str], roots: Iterable[str | os.PathLike]) -> None:
    """Update ``digest`` with what a composition of ``argv`` on the config folders ``roots`` reads.
    Raises OSError, ImportError or ValueError (a ``pkg://`` search path override) when a part cannot
    be read: then nothing may be cached."""
    from importlib import metadata

    from wfeval.config.plugins import installed_plugins
    from wfeval.config.schema_cache import this_key

    sources = this_key()
    if sources is None:
        raise OSError("wfeval's sources cannot be read")
    digest.update(f"{sources}\0{sys.version}\0".encode())
    for package in ("hydra-core", "omegaconf"):
        digest.update(f"{package}=={metadata.version(package)}\0".encode())
    for arg in argv:
        digest.update(arg.encode() + b"\0")
    for root in [Path(p) for p in roots] + [Path(p) for p in searchpath_dirs(argv)]:
        for path in sorted(root.rglob("*.yaml")):
            digest.update(f"{path}\0".encode() + path.read_bytes())
    for name in sorted(os.environ):  # ${oc.env:...} in the configs
        if name.startswith(("WFEVAL_", "HYDRA_")):
            digest.update(f"{name}={os.environ[name]}\0".encode())
    digest.update(hydra_plugins().encode())
    digest.update(installed_plugins().key.encode())  # wfeval plugin packages: entry points, config files


def searchpath_dirs(argv: Sequence[str]) -> list[str]:
    """The folders a ``hydra.searchpath=[file://...]`` override names (a ``pkg://`` entry: a key cannot
    cover it, ValueError)."""
    out = []
    for arg in argv:
        key, _, value = arg.partition("=")
        if key.lstrip("+~") == "hydra.searchpath":
            for item in value.strip("[]").split(","):
                item = item.strip().strip("'\"")
                if item.startswith("file://"):
                    out.append(item[len("file://"):])
                elif item:
                    raise ValueError(item)
    return out


def hydra_plugins() -> str:
    """The installed Hydra plugins (a search-path plugin adds config files): the modules of every
    ``hydra_plugins`` folder on the import path, with their times."""
    out = []
    for entry in sys.path:
        folder = Path(entry or ".") / "hydra_plugins"
        if folder.is_dir():
            out += sorted(f"{p}:{p.stat().st_mtime_ns}" for p in folder.iterdir())
    return ";".join(out)
