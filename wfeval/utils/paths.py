"""Where wfeval keeps downloaded weights, converted state dicts and feature caches.

Resolution order: an explicit folder (config key ``metric.fvd.cache_dir``), then the environment
variable ``WFEVAL_CACHE``, then ``$XDG_CACHE_HOME/wfeval``, then ``~/.cache/wfeval``.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_VAR = "WFEVAL_CACHE"


def cache_dir(explicit: str | os.PathLike[str] | None = None) -> Path:
    """The cache folder (not created here)."""
    if explicit:
        return Path(explicit).expanduser().resolve()
    env = os.environ.get(ENV_VAR)
    if env:
        return Path(env).expanduser().resolve()
    xdg = os.environ.get("XDG_CACHE_HOME")
    base = Path(xdg).expanduser() if xdg else Path.home() / ".cache"
    return (base / "wfeval").resolve()
