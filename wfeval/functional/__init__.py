"""Functional twins of the metrics: plain functions over numpy arrays and torch tensors.

Names are resolved lazily (importing this package imports neither torch nor any metric
module); ``from wfeval.functional import psnr`` loads only the module that defines ``psnr``.
"""

from __future__ import annotations

import importlib
from typing import Any

_EXPORTS = {
    # reference metrics (wfeval/functional/reference.py)
    "psnr": "reference",
    "ssim": "reference",
    "mse": "reference",
    "mae": "reference",
    # temporal metrics (wfeval/functional/temporal.py)
    "flicker": "temporal",
    "motion_magnitude": "temporal",
    "frame_repeat_rate": "temporal",
    # control metrics (wfeval/functional/control.py)
    "locate_agent": "control",
    "action_following": "control",
    "implied_moves": "control",
    "ColorLocator": "control",
    # distribution metrics (wfeval/frechet.py, wfeval/functional/_fvd.py: the module is
    # private so that the package attribute ``fvd`` is always the function, never the module)
    "frechet_distance": "wfeval.frechet",
    "fvd": "_fvd",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module 'wfeval.functional' has no attribute {name!r}")
    path = module if "." in module else f"wfeval.functional.{module}"
    value = getattr(importlib.import_module(path), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
