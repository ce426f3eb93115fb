"""wfeval: declarative, config-driven evaluation of world models.

The public contracts live in :mod:`wfeval.api`; the Hydra entry point is ``python -m wfeval``;
``wfeval.evaluate(model=...)`` evaluates a model object from Python (docs/python-api.md).
Importing this package is cheap: nothing heavy (torch, av, hydra) is imported here.
"""

from typing import Any

__version__ = "0.1.0"
__all__ = ["evaluate", "__version__"]


def __getattr__(name: str) -> Any:
    if name == "evaluate":  # imported on first use: `import wfeval` stays cheap
        from wfeval.pipeline.evaluate import evaluate

        return evaluate
    raise AttributeError(f"module 'wfeval' has no attribute {name!r}")
