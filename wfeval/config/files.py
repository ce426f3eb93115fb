"""wfeval's own config files (the package ``wfeval.conf``), each file's YAML parsed once a process.

Hydra's config source ``wfeval-files://`` (``hydra_plugins.wfeval_configs.WfevalFilesSource``) reads a
file at every load and asks here for its node: the file's text is parsed with OmegaConf's loader (as
Hydra's own ``pkg://`` source loads it) the first time, and the parsed node is kept by the file's text, so
a file whose text changed is parsed again; each load gets a copy (Hydra changes what it loads). The
cache lives here, not in the Hydra plugin's module: Hydra's plugin scan executes that module again in
every process, which would empty it (and a server that forks its workers, which calls :func:`warm` once,
would hand them nothing).
"""

from __future__ import annotations

import copy
import io
from typing import Any

PACKAGE = "wfeval.conf"

#: (package, config path such as ``metric/psnr.yaml``) -> (the file's text, its parsed node), this process
_PARSED: dict[tuple[str, str], tuple[str, Any]] = {}


def parsed(package: str, config_path: str, text: str) -> Any:
    """A copy of the node ``text`` parses to, parsed once a process for the same text of the same file."""
    from omegaconf import OmegaConf

    key = (package, config_path)
    kept = _PARSED.get(key)
    if kept is None or kept[0] != text:
        kept = (text, OmegaConf.load(io.StringIO(text)))
        _PARSED[key] = kept
    return copy.deepcopy(kept[1])


def warm(package: str = PACKAGE) -> int:
    """Parse every config file of ``package`` into this process's cache (a server that forks its workers
    calls it once, so that each worker's first composition finds them parsed); the number of files."""
    from importlib import resources

    count = 0
    pending = [("", resources.files(package))]
    while pending:
        prefix, folder = pending.pop()
        for entry in folder.iterdir():
            if entry.is_dir() and entry.name != "__pycache__":
                pending.append((f"{prefix}{entry.name}/", entry))
            elif entry.name.endswith(".yaml"):
                parsed(package, f"{prefix}{entry.name}", entry.read_text(encoding="utf-8"))
                count += 1
    return count
