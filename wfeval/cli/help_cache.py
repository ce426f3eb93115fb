"""The help texts of ``python -m wfeval --help``, kept in ``<cache>/help/`` (``<cache>``: ``$WFEVAL_CACHE``,
default ``~/.cache/wfeval``) under the sha256 of what the text is a function of: the command line,
the config files (wfeval's and those of a ``hydra.searchpath=[file://...]`` given), wfeval's sources,
the ``WFEVAL_*`` / ``HYDRA_*`` environment variables (``${oc.env:...}`` in the configs), Hydra's version
and the installed Hydra plugins. Any change gives another key; the 32 newest texts are kept.
"""

from __future__ import annotations

import hashlib
from pathlib import Path


def key(argv: list[str]) -> str | None:
    """sha256 of what the help text depends on (:func:`wfeval.config.compose_key.config_inputs`); None
    when a part cannot be read (nothing kept)."""
    from wfeval.config.compose_key import config_inputs

    try:
        import wfeval.conf as conf

        digest = hashlib.sha256(b"wfeval help 2\0")
        config_inputs(digest, argv, conf.__path__)
        return digest.hexdigest()
    except (OSError, ImportError, ValueError):
        return None


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
