"""Structured-config schemas of the built-in model options (``schema/model/<name>``).

No heavy imports here: this module is loaded by ``python -m wfeval --help``.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass
class OracleModelSchema:
    _target_: str = "wfeval.models.baselines.OracleModel"
    name: str = "oracle"


@dataclass
class StaticModelSchema:
    _target_: str = "wfeval.models.baselines.StaticModel"
    name: str = "static"


@dataclass
class RandomActionsModelSchema:
    _target_: str = "wfeval.models.baselines.RandomActionsModel"
    name: str = "random_actions"
    seed: int = 0
    p_repeat: float = 0.5


SCHEMAS = {
    "oracle": OracleModelSchema,
    "static": StaticModelSchema,
    "random_actions": RandomActionsModelSchema,
}
