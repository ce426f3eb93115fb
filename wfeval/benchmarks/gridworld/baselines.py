"""Baseline world models for the built-in gridworld: an upper bound and graded broken models.

They bracket what a metric must rank: ``oracle`` is exact, ``static`` ignores time and actions,
``random_actions`` has the right dynamics but ignores the given actions; ``noisy`` (Gaussian
pixel noise of σ levels) and ``blur`` degrade the oracle's pixels but not its control, and
``lagged`` renders sharp frames that follow the actions one step late.
"""

from __future__ import annotations

import hashlib
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


def _needs_world(request: GenerationRequest) -> str | None:
    if "world" in request.metadata:
        return None
    return ("needs the gridworld simulator state (metadata['world']), which only the gridworld "
            "benchmark provides")


class _Baseline:
    name = "baseline"
    version = "1.0"

    def __init__(self, name: str | None = None):
        if name:
            self.name = name

    @classmethod
    def cannot_serve(cls, request: GenerationRequest) -> str | None:
        """Why this baseline cannot produce an output for ``request`` (checked before generation)."""
        return _needs_world(request)

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Mapping[str, np.ndarray]]:
        return [{"generated_video": self.generate_one(r)} for r in requests]

    def generate_one(self, request: GenerationRequest) -> np.ndarray:
        raise NotImplementedError


class OracleModel(_Baseline):
    """The ground truth of any benchmark that has one (the upper bound): the gridworld simulator
    replaying the given actions from the true state; on a simulator-recorded benchmark (atari_*,
    crafter) the real game continued from its saved state; elsewhere the reference video itself."""

    name = "oracle"

    def __init__(self, name: str | None = None):
        super().__init__(name)
        self._simulators: dict = {}

    @classmethod
    def cannot_serve(cls, request: GenerationRequest) -> str | None:
        if "world" in request.metadata or "simulator" in request.metadata or "video" in request.references:
            return None
        return "no ground truth: neither a simulator state nor a reference video"

    def generate_one(self, request: GenerationRequest) -> np.ndarray:
        if "world" in request.metadata:
            video, _ = world.rollout(_world_state(request), actions_of(request))
            return video
        if "simulator" in request.metadata:
            from wfeval.benchmarks.recorded.baselines import continue_game

            return continue_game(request, actions_of(request), self.__dict__.setdefault("_simulators", {}))
        if "video" in request.references:
            from wfeval.artifacts import read_array

            return read_array(request.references["video"])
        return _world_state(request)  # raises: names the sample and what is missing

    def close(self) -> None:
        simulators = getattr(self, "_simulators", {})  # a subclass may not have called __init__
        for sim in simulators.values():
            close = getattr(sim, "close", None)
            if callable(close):
                close()
        simulators.clear()


class StaticModel(_Baseline):
    """Repeats the initial frame once per action (plus the initial frame itself)."""

    name = "static"

    @classmethod
    def cannot_serve(cls, request: GenerationRequest) -> str | None:
        return None if "image" in request.inputs else "needs an initial frame (inputs['image'])"

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


def _sample_rng(seed: int, sample_id: str) -> np.random.Generator:
    """A generator seeded from (model seed, sample id): the same noise for a sample in any batch."""
    digest = hashlib.sha256(f"{seed}/{sample_id}".encode()).digest()
    return np.random.default_rng(int.from_bytes(digest[:8], "little"))


class NoisyModel(OracleModel):
    """The oracle plus i.i.d. Gaussian noise of ``sigma`` uint8 levels on every pixel of every frame,
    seeded per sample from (``seed``, sample id), rounded and clipped to [0, 255]."""

    name = "noisy"

    def __init__(self, name: str | None = None, sigma: float = 10.0, seed: int = 0):
        super().__init__(name)
        if not sigma >= 0:
            raise ValueError(f"model.sigma must be >= 0, got {sigma}")
        self.sigma, self.seed = float(sigma), int(seed)

    def generate_one(self, request: GenerationRequest) -> np.ndarray:
        video = super().generate_one(request).astype(np.float64)
        video += _sample_rng(self.seed, request.sample_id).normal(0.0, self.sigma, video.shape)
        return np.clip(np.rint(video), 0, 255).astype(np.uint8)


def gaussian_blur(video: np.ndarray, kernel_size: int, sigma: float) -> np.ndarray:
    """Blur each frame of a ``T×H×W×C`` uint8 video with a separable ``kernel_size`` Gaussian of
    std ``sigma`` (edges mirrored, numpy's ``reflect``), rounded back to uint8."""
    radius = kernel_size // 2
    taps = np.exp(-0.5 * (np.arange(-radius, radius + 1) / sigma) ** 2)
    taps /= taps.sum()
    mode = "reflect" if min(video.shape[1:3]) > radius else "edge"
    x = np.pad(video.astype(np.float64), ((0, 0), (radius, radius), (radius, radius), (0, 0)), mode=mode)
    h, w = video.shape[1:3]
    x = sum(t * x[:, i:i + h] for i, t in enumerate(taps))
    x = sum(t * x[:, :, i:i + w] for i, t in enumerate(taps))
    return np.clip(np.rint(x), 0, 255).astype(np.uint8)


class BlurModel(OracleModel):
    """The oracle with every frame blurred by a ``kernel_size``×``kernel_size`` Gaussian of std ``sigma``."""

    name = "blur"

    def __init__(self, name: str | None = None, kernel_size: int = 5, sigma: float = 1.0):
        super().__init__(name)
        if kernel_size < 1 or kernel_size % 2 == 0:
            raise ValueError(f"model.kernel_size must be an odd integer >= 1, got {kernel_size}")
        if not sigma > 0:
            raise ValueError(f"model.sigma must be > 0, got {sigma}")
        self.kernel_size, self.sigma = int(kernel_size), float(sigma)

    def generate_one(self, request: GenerationRequest) -> np.ndarray:
        return gaussian_blur(super().generate_one(request), self.kernel_size, self.sigma)


class LaggedModel(_Baseline):
    """The true simulator with every action applied ``lag`` steps late (``noop`` first)."""

    name = "lagged"

    def __init__(self, name: str | None = None, lag: int = 1):
        super().__init__(name)
        if lag < 0:
            raise ValueError(f"model.lag must be >= 0, got {lag}")
        self.lag = int(lag)

    def generate_one(self, request: GenerationRequest) -> np.ndarray:
        actions = actions_of(request)
        noop = world.ACTIONS.index("noop")
        late = ((noop,) * self.lag + actions)[: len(actions)]
        video, _ = world.rollout(_world_state(request), late)
        return video
