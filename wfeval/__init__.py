"""wfeval: declarative, config-driven evaluation of world models.

The public contracts live in :mod:`wfeval.api`; the Hydra entry point is ``python -m wfeval``;
``wfeval.evaluate(model=...)`` evaluates a model object from Python (docs/python-api.md).
Importing this package is cheap: nothing heavy (torch, av, hydra) is imported here.
"""

import sys
from pathlib import Path
from typing import Any

__version__ = "0.1.0"
__all__ = ["evaluate", "__version__"]


def _own_configs() -> None:
    """``wfeval.conf`` is the ``conf/`` beside this package in a checkout (an editable install of another
    checkout maps that name to its own tree); an installed wheel ships it inside as ``wfeval/conf``."""
    root = Path(__file__).resolve().parent.parent
    conf = root / "conf"
    if "wfeval.conf" in sys.modules or not (conf / "config.yaml").is_file() or not (root / "pyproject.toml").is_file():
        return
    import importlib.util

    spec = importlib.util.spec_from_file_location("wfeval.conf", conf / "__init__.py",
                                                  submodule_search_locations=[str(conf)])
    if spec is not None and spec.loader is not None:
        module = importlib.util.module_from_spec(spec)
        sys.modules["wfeval.conf"] = module
        spec.loader.exec_module(module)
        globals()["conf"] = module  # what the import system sets on the parent of a submodule it loads


_own_configs()


def __getattr__(name: str) -> Any:
    if name == "evaluate":  # imported on first use: `import wfeval` stays cheap
        from wfeval.pipeline.evaluate import evaluate

        return evaluate
    raise AttributeError(f"module 'wfeval' has no attribute {name!r}")
