"""Structured-config schema of ``model=learned`` (light: loaded by ``python -m wfeval --help``)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Optional

from omegaconf import MISSING

from wfeval.config.schema import store_schema
from wfeval.models.schemas import ModelRulesSchema


@dataclass
class LearnedModelSchema(ModelRulesSchema):
    """The recipe's PyTorch frame predictor served from a checkpoint (wfeval/recipes/learned.py)."""

    _target_: str = "wfeval.recipes.learned.LearnedModel"
    checkpoint: str = MISSING  # model.pt (its model.json beside it) or the folder holding both
    name: str = "learned"
    device: str = "auto"  # cpu | cuda | cuda:N | mps | auto
    batch_size: Optional[int] = None  # requests per batched rollout; default: run.batch_size


SCHEMAS = {"learned": LearnedModelSchema}


def register() -> None:
    """Store ``schema/model/learned`` in Hydra's ConfigStore."""
    for name, node in SCHEMAS.items():
        store_schema("schema/model", name, node)


register()
