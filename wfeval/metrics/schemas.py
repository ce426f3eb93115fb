"""Structured-config schemas of the built-in metric options (``schema/metric/<id>``).

No heavy imports here: this module is loaded by ``python -m wfeval --help``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import List


@dataclass
class GeneratedRateSchema:
    _target_: str = "wfeval.metrics.basic.GeneratedRate"
    confidence: float = 0.95
    output_keys: List[str] = field(default_factory=lambda: ["generated_video"])


@dataclass
class ArtifactCountSchema:
    _target_: str = "wfeval.metrics.basic.ArtifactCount"
    confidence: float = 0.95


@dataclass
class FVDSchema:
    _target_: str = "wfeval.metrics.fvd.FVD"
    clip_length: int = 16
    resize: int = 224
    resize_mode: str = "bilinear"
    covariance: str = "N"  # N (StyleGAN-V) | N-1 (TF-GAN)


SCHEMAS = {"generated_rate": GeneratedRateSchema, "artifact_count": ArtifactCountSchema, "fvd": FVDSchema}
