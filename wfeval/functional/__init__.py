"""Functional twins of the metrics: plain functions on numpy arrays or torch tensors.

Names are resolved lazily (importing this package imports neither torch nor any metric
module); ``from wfeval.functional import psnr`` loads only the modules it needs to find
``psnr``. Each formula module lists its public functions in its ``__all__``, so a new
function is exported by adding it to its own module.
"""

from __future__ import annotations

import importlib
from typing import Any

# formula modules, searched in order: reference, dynamic-pixel reference, temporal, control, learned
# perceptual, controllability, memory, ranking, ensemble (uncertainty) and reward-prediction metrics
_MODULES = ("wfeval.functional.reference", "wfeval.functional.dynamic", "wfeval.functional.temporal",
            "wfeval.functional.control", "wfeval.functional.perceptual", "wfeval.functional.controllability",
            "wfeval.functional.memory", "wfeval.functional.ranking", "wfeval.functional.uncertainty",
            "wfeval.functional.rewards")
# distribution metrics (wfeval/stats/frechet.py, wfeval/functional/_fvd.py: the module is private so
# that the package attribute ``fvd`` is always the function, never the module)
_ELSEWHERE = {"frechet_distance": "wfeval.stats.frechet", "fvd": "wfeval.functional._fvd"}


def _public() -> dict[str, str]:
    names = dict(_ELSEWHERE)
    for module in _MODULES:
        names.update((name, module) for name in importlib.import_module(module).__all__)
    return names


def __getattr__(name: str) -> Any:
    if name == "__all__":
        return sorted(_public())
    if name.startswith("__"):
        raise AttributeError(name)
    module = _ELSEWHERE.get(name)
    if module is None:
        module = next((m for m in _MODULES if name in importlib.import_module(m).__all__), None)
    if module is None:
        raise AttributeError(f"module 'wfeval.functional' has no attribute {name!r}")
    value = getattr(importlib.import_module(module), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted(_public())
