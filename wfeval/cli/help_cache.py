"""The help texts of ``python -m wfeval --help``, kept in ``<cache>/help/`` (``<cache>``: ``$WFEVAL_CACHE``,
default ``~/.cache/wfeval``) under the sha256 of what the text is a function of: the command line,
the config files (wfeval's and those of a ``hydra.searchpath=[file://...]`` given), wfeval's sources,
the ``WFEVAL_*`` / ``HYDRA_*`` environment variables (``${oc.env:...}`` in the configs), Hydra's version
and the installed Hydra plugins. Any change gives another key; the 32 newest texts are kept.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path


def key(argv: list[str]) -> str | None:
    """sha256 of what the help text depends on; None when a part cannot be read (nothing kept)."""
    from wfeval.config.schema_cache import source_key

    try:
        import wfeval.conf as conf

        digest = hashlib.sha256(b"wfeval help 1\0")
        digest.update(f"{source_key()}\0{sys.version}\0".encode())
        for arg in argv:
            digest.update(arg.encode() + b"\0")
        roots = [Path(p) for p in conf.__path__] + [Path(p) for p in _searchpath_dirs(argv)]
        for root in roots:
            for path in sorted(root.rglob("*.yaml")):
                digest.update(f"{path}\0".encode() + path.read_bytes())
        for name in sorted(os.environ):  # ${oc.env:...} in the configs
            if name.startswith(("WFEVAL_", "HYDRA_")):
                digest.update(f"{name}={os.environ[name]}\0".encode())
        digest.update(_plugin_versions().encode())
        from wfeval.config.plugins import installed_plugins

        digest.update(installed_plugins().key.encode())  # wfeval plugin packages: entry points, config files
        return digest.hexdigest()
    except (OSError, ImportError, ValueError):
        return None


def _searchpath_dirs(argv: list[str]) -> list[str]:
    """The folders a ``hydra.searchpath=[file://...]`` override names (a ``pkg://`` entry: the key
    cannot cover it, so nothing is kept)."""
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


def _plugin_versions() -> str:
    """Hydra's version (its help template) and the installed Hydra plugins (a search-path plugin adds
    config files): the modules of every ``hydra_plugins`` folder on the import path, with their times."""
    from importlib import metadata

    out = [metadata.version("hydra-core")]
    for entry in sys.path:
        folder = Path(entry or ".") / "hydra_plugins"
        if folder.is_dir():
            out += sorted(f"{p}:{p.stat().st_mtime_ns}" for p in folder.iterdir())
    return ";".join(out)


def _folder() -> Path:
    from wfeval.utils.paths import cache_dir

    return cache_dir() / "help"


def cached(key: str) -> str | None:
    try:
        return (_folder() / f"{key}.txt").read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None


def keep(key: str, text: str) -> None:
    """Keep the text (atomically); the 32 newest are kept. A cache that cannot be written costs only time."""
    from wfeval.storage.safe_io import atomic_write_bytes

    try:
        atomic_write_bytes(_folder() / f"{key}.txt", text.encode("utf-8"), durable=False)
        kept = sorted(_folder().glob("*.txt"), key=lambda p: p.stat().st_mtime, reverse=True)
        for old in kept[32:]:
            old.unlink(missing_ok=True)
    except OSError:
        pass
