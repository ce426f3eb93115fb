"""Test-only plugins loaded through `_target_`, the way users add their own pieces."""

from __future__ import annotations

import dataclasses
import os
import time

import numpy as np

from wfeval.api import MetricResult
from wfeval.benchmarks.gridworld.baselines import OracleModel
from wfeval.metrics.base import BaseMetric
from wfeval.metrics.outcomes import scored
from wfeval.protocols.base import Protocol


class SlowOracle(OracleModel):
    """The oracle, ``delay_s`` slower per sample (to interrupt a run halfway); from sample index
    ``hold_from`` on it also waits while the file named by ``WFEVAL_TEST_HOLD_WHILE`` exists (at most
    120 s), so a test can hold a run halfway however loaded the machine is. The file is named by the
    environment, not an option: a path the model holds is part of its identity (hashed by content),
    and the resumed run must be the same model."""

    def __init__(self, name: str = "slow_oracle", delay_s: float = 0.2, hold_from: int = 0):
        super().__init__(name)
        self.delay_s = delay_s
        self.hold_from = int(hold_from)

    def generate_one(self, request):
        time.sleep(self.delay_s)
        hold = os.environ.get("WFEVAL_TEST_HOLD_WHILE")
        if hold and int(request.sample_id.rsplit("-", 1)[1]) >= self.hold_from:
            deadline = time.monotonic() + 120
            while os.path.exists(hold) and time.monotonic() < deadline:
                time.sleep(0.02)
        return super().generate_one(request)


class FlakyOracle(OracleModel):
    """The oracle, raising on the samples whose index is listed in ``fail_on``."""

    def __init__(self, name: str = "flaky_oracle", fail_on=(3,)):
        super().__init__(name)
        self.fail_on = {int(i) for i in fail_on}

    def generate_one(self, request):
        if int(request.sample_id.rsplit("-", 1)[1]) in self.fail_on:
            raise RuntimeError(f"simulated model crash on {request.sample_id}")
        return super().generate_one(request)


#: ``FrameCount.close`` calls of this process (one entry per call)
CLOSED: list = []


class FrameCount(BaseMetric):
    """Frames in the generated video; raises on the samples listed in ``raise_on``; its ``close`` is
    counted in :data:`CLOSED` and raises with ``close_raises``."""

    name = "frame_count"
    required_artifacts = ("generated_video",)

    def __init__(self, raise_on=(), confidence: float = 0.95, close_raises: bool = False):
        super().__init__(confidence)
        self.raise_on = {int(i) for i in raise_on}
        self.close_raises = bool(close_raises)

    def close(self) -> None:
        CLOSED.append(self.name)
        if self.close_raises:
            raise OSError("simulated close failure")

    def compute_sample(self, request, result) -> MetricResult:
        if int(request.sample_id.rsplit("-", 1)[1]) in self.raise_on:
            raise ZeroDivisionError("simulated metric bug")
        return scored(request.sample_id, self.name, result.artifacts["generated_video"].shape[0])


class NoisyActions(Protocol):
    """A protocol of one's own (``protocol=noisy_actions``): the model gets the sample's actions with
    each replaced, with probability ``p``, by a seeded random one; the reference stays the true
    rollout — how much a model's numbers drop when its actions are perturbed. Its module and its
    config file are all it takes (docs/architecture.md, "Add a protocol")."""

    driver = "noisy_actions"
    needs_steps = False

    def __init__(self, p: float = 0.5, seed: int = 0):
        if not 0.0 <= p <= 1.0:
            raise ValueError(f"protocol.p must be in [0, 1], got {p}")
        self.p, self.seed = float(p), int(seed)

    def identity(self, run):
        return {**super().identity(run), "p": self.p, "seed": self.seed}

    def drive(self, model, benchmark, store, run, policy=None):
        return _Perturbed(model, self.p, self.seed)


class _Perturbed:
    def __init__(self, model, p, seed):
        self.model, self.p, self.seed = model, p, seed

    def generate(self, requests):
        out = []
        for request in requests:
            rng = np.random.default_rng([self.seed, int(request.generation.get("seed") or 0)])
            actions = [a if rng.random() >= self.p else int(rng.integers(0, 5)) for a in request.controls["actions"]]
            out.append(dataclasses.replace(request, controls={**request.controls, "actions": actions}))
        return self.model.generate(out)
