"""Baseline world models for the built-in gridworld: an upper bound and two broken models.

They bracket what a metric must rank: ``oracle`` is exact, ``static`` ignores time and actions,
``random_actions`` has the right dynamics but ignores the given actions.
"""

from __future__ import annotations

from typing import Mapping, Sequence

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.benchmarks.gridworld import world
from wfeval.models.base import actions_of, initial_frame


def _world_state(request: GenerationRequest) -> world.WorldState:
    try:
        return world.WorldState.from_dict(request.metadata["world"])
    except KeyError:
        raise ValueError(
            f"sample {request.sample_id!r}: no 'world' state in the request metadata; "
            "the simulator baselines only run on the gridworld benchmark"
        ) from None


class _Baseline:
    name = "baseline"
    version = "1.0"

    def __init__(self, name: str | None = None):
        if name:
            self.name = name

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Mapping[str, np.ndarray]]:
        return [{"generated_video": self.generate_one(r)} for r in requests]

    def generate_one(self, request: GenerationRequest) -> np.ndarray:
        raise NotImplementedError


class OracleModel(_Baseline):
    """The true simulator: replays the given actions from the true initial state."""

    name = "oracle"

    def generate_one(self, request: GenerationRequest) -> np.ndarray:
        video, _ = world.rollout(_world_state(request), actions_of(request))
        return video


class StaticModel(_Baseline):
    """Repeats the initial frame once per action (plus the initial frame itself)."""

    name = "static"

    def generate_one(self, request: GenerationRequest) -> np.ndarray:
        frame = initial_frame(request)
        return np.repeat(frame[None], len(actions_of(request)) + 1, axis=0)


class RandomActionsModel(_Baseline):
    """The true simulator driven by seeded random actions of the same length."""

    name = "random_actions"

    def __init__(self, name: str | None = None, seed: int = 0, p_repeat: float = 0.5):
        super().__init__(name)
        self.seed = seed
        self.p_repeat = p_repeat

    def generate_one(self, request: GenerationRequest) -> np.ndarray:
        n = len(actions_of(request))
        rng_seed = (self.seed * 1_000_003 + int(request.metadata.get("episode_seed", 0))) % (2**32)
        video, _ = world.rollout(_world_state(request), world.sample_actions(rng_seed, n, p_repeat=self.p_repeat))
        return video
