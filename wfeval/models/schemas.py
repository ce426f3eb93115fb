"""Structured-config schemas of the built-in model options (``schema/model/<name>``).

No heavy imports here: this module is loaded by ``python -m wfeval --help``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Dict, List, Optional

from omegaconf import MISSING

from wfeval.config.schema import store_schema


@dataclass
class ModelRulesSchema:
    """Keys every model option accepts; the pipeline reads them, the model never sees them."""

    # the range of a float output ([0, 1] or [0, 255]); null: outputs must be uint8 (docs/reliability.md)
    output_range: Optional[List[float]] = None


@dataclass
class OracleModelSchema(ModelRulesSchema):
    _target_: str = "wfeval.benchmarks.gridworld.baselines.OracleModel"
    name: str = "oracle"


@dataclass
class StaticModelSchema(ModelRulesSchema):
    _target_: str = "wfeval.benchmarks.gridworld.baselines.StaticModel"
    name: str = "static"


@dataclass
class RandomActionsModelSchema(ModelRulesSchema):
    _target_: str = "wfeval.benchmarks.gridworld.baselines.RandomActionsModel"
    name: str = "random_actions"
    seed: int = 0
    p_repeat: float = 0.5


@dataclass
class NoisyModelSchema(ModelRulesSchema):
    _target_: str = "wfeval.benchmarks.gridworld.baselines.NoisyModel"
    name: str = "noisy"
    sigma: float = 10.0  # std of the Gaussian pixel noise, in uint8 levels
    seed: int = 0


@dataclass
class BlurModelSchema(ModelRulesSchema):
    _target_: str = "wfeval.benchmarks.gridworld.baselines.BlurModel"
    name: str = "blur"
    kernel_size: int = 5  # odd
    sigma: float = 1.0


@dataclass
class LaggedModelSchema(ModelRulesSchema):
    _target_: str = "wfeval.benchmarks.gridworld.baselines.LaggedModel"
    name: str = "lagged"
    lag: int = 1  # steps by which every action is applied late


@dataclass
class PrecomputedModelSchema(ModelRulesSchema):
    """Videos already generated elsewhere, one per sample (wfeval/models/precomputed.py)."""

    _target_: str = "wfeval.models.precomputed.PrecomputedModel"
    root: str = MISSING
    name: str = "precomputed"
    version: str = "1.0"
    path_template: str = "{sample_id}"  # fields: {sample_id} {split} {benchmark} {task}
    formats: List[str] = field(default_factory=list)  # e.g. [mkv, npy]; empty: every readable format
    output_key: str = "generated_video"
    fingerprint_mode: str = "content"  # content | stat (size + mtime: faster on huge folders)
    check_complete: bool = True


@dataclass
class CommandModelSchema(ModelRulesSchema):
    """Your inference program, run once per batch without a shell (wfeval/models/command.py)."""

    _target_: str = "wfeval.models.command.CommandModel"
    argv: Optional[List[str]] = MISSING  # the batch program; null when step_argv alone serves the model
    step_argv: Optional[List[str]] = None  # a long-running program serving the step interface (docs/protocols.md)
    name: str = "command"
    version: str = "1.0"  # bump when outputs change in a way no file hash shows
    cwd: Optional[str] = None
    env: Dict[str, str] = field(default_factory=dict)
    timeout_s: Optional[float] = None  # per batch
    retries: int = 0
    retry_delay_s: float = 1.0
    output_keys: List[str] = field(default_factory=lambda: ["generated_video"])
    batch_size: Optional[int] = None  # default: run.batch_size
    work_dir: Optional[str] = None  # default: the system temp folder
    keep_work_dir: bool = False
    fingerprint_paths: List[str] = field(default_factory=list)  # weights, packages: part of the identity
    log_tail_chars: int = 4000


@dataclass
class PythonModelSchema(ModelRulesSchema):
    """Any object with generate(requests), built from model.object._target_ (wfeval/models/python.py)."""

    _target_: str = "wfeval.models.python.PythonModel"
    object: Any = field(default_factory=lambda: {"_target_": MISSING})
    name: Optional[str] = None  # default: the object's name, else its class name
    version: Optional[str] = None  # default: the object's version
    device: str = "cpu"  # cpu | cuda | cuda:N | mps | auto
    batch_size: Optional[int] = None  # default: run.batch_size
    fingerprint_source: bool = True  # the class's source file is part of the identity



@dataclass
class GameOracleModelSchema(ModelRulesSchema):
    """Recorded games (atari_*, crafter): the real game continued from the saved state, true actions."""

    _target_: str = "wfeval.benchmarks.recorded.baselines.SimulatorOracle"
    name: str = "game_oracle"


@dataclass
class GameRandomActionsModelSchema(ModelRulesSchema):
    """Recorded games: the real game continued from the saved state with seeded random actions."""

    _target_: str = "wfeval.benchmarks.recorded.baselines.SimulatorRandomActions"
    name: str = "game_random_actions"
    seed: int = 0
    p_repeat: float = 0.5


SCHEMAS = {
    "oracle": OracleModelSchema,
    "static": StaticModelSchema,
    "random_actions": RandomActionsModelSchema,
    "noisy": NoisyModelSchema,
    "blur": BlurModelSchema,
    "lagged": LaggedModelSchema,
    "precomputed": PrecomputedModelSchema,
    "command": CommandModelSchema,
    "python": PythonModelSchema,
}
SCHEMAS.update({"game_oracle": GameOracleModelSchema, "game_random_actions": GameRandomActionsModelSchema})


def register() -> None:
    """Store each schema as ``schema/model/<name>`` in Hydra's ConfigStore (built when first loaded)."""
    for name, node in SCHEMAS.items():
        store_schema("schema/model", name, node)


register()
