"""wfeval: declarative, config-driven evaluation of world models.

The public contracts live in :mod:`wfeval.api`; the Hydra entry point is ``python -m wfeval``.
Importing this package is cheap: nothing heavy (torch, av) is imported here.
"""

__version__ = "0.1.0"
