"""``model=ensemble_noisy``: a stochastic calibration model for ``task=uncertainty`` (docs/uncertainty.md)."""

from __future__ import annotations

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.benchmarks.gridworld.baselines import NoisyModel, OracleModel, _draw_rng, _sample_rng


class EnsembleNoisyModel(NoisyModel):
    """A stochastic model whose spread is known (``task=uncertainty``): the oracle off by an error δ of
    ``offset_sigma`` levels per pixel (seeded per sample, the same in every draw), each draw adding
    noise of its own of ``sigma`` levels. With ``sigma == offset_sigma`` the truth is exchangeable
    with the draws (calibrated: flat PIT, coverage at the nominal level, apart from rounding and the
    clip at 0 and 255); ``sigma < offset_sigma`` is overconfident, ``offset_sigma = 0`` (``noisy``)
    overdispersed."""

    name = "ensemble_noisy"
    version = "1.0"

    def __init__(self, name: str | None = None, sigma: float = 10.0, offset_sigma: float = 10.0, seed: int = 0):
        super().__init__(name, sigma, seed)
        if not offset_sigma >= 0:
            raise ValueError(f"model.offset_sigma must be >= 0, got {offset_sigma}")
        self.offset_sigma = float(offset_sigma)

    def generate_one(self, request: GenerationRequest) -> np.ndarray:
        video = OracleModel.generate_one(self, request).astype(np.float64)
        offset = _sample_rng(self.seed, f"{request.sample_id}/offset").normal(0.0, self.offset_sigma, video[1:].shape)
        spread = _draw_rng(self.seed, request).normal(0.0, self.sigma, video[1:].shape)
        moved = np.clip(np.rint(video[1:] + offset + spread), 0, 255).astype(np.uint8)
        return np.concatenate([video[:1].astype(np.uint8), moved])

    start = step = step_many = None  # whole videos only (protocol=sampling, open_loop): no step interface
