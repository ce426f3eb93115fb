"""Test-only world models for the python adapter and the generation controls (loaded by `_target_`)."""

from __future__ import annotations

import time

import numpy as np

from wfeval.models.base import actions_of, initial_frame
from wfeval.models.protocol import NotGenerated

CALLS: list[dict] = []  # what every RecordingModel did, in this process


class RecordingModel:
    """Repeats the initial frame plus noise from the request's seed; records every call.

    ``missing``: sample-id suffixes returned as NotGenerated; ``broken``: returned as an exception;
    ``raise_on``: suffixes that make the whole batch raise; ``sleep_s``: seconds per sample.
    """

    name = "recording"
    version = "1.0"

    def __init__(self, missing=(), broken=(), raise_on=(), sleep_s: float = 0.0, noise: float = 0.0):
        self.missing, self.broken, self.raise_on = set(missing), set(broken), set(raise_on)
        self.sleep_s, self.noise = sleep_s, noise
        self.device = None

    def _match(self, request, names) -> bool:
        return any(request.sample_id.endswith(str(n)) for n in names)

    def setup(self, device: str = "?") -> None:
        self.device = device
        CALLS.append({"event": "setup", "device": device})

    def close(self) -> None:
        CALLS.append({"event": "close"})

    def generate(self, requests):
        CALLS.append({"event": "generate", "ids": [r.sample_id for r in requests],
                      "seeds": [r.generation.get("seed") for r in requests]})
        out = []
        for request in requests:
            if self._match(request, self.raise_on):
                raise RuntimeError(f"batch crash because of {request.sample_id}")
            time.sleep(self.sleep_s)
            if self._match(request, self.missing):
                out.append(NotGenerated(f"nothing for {request.sample_id}"))
            elif self._match(request, self.broken):
                out.append(ValueError(f"cannot do {request.sample_id}"))
            else:
                frame = initial_frame(request)
                video = np.repeat(frame[None], len(actions_of(request)) + 1, axis=0)
                if self.noise:
                    rng = np.random.default_rng(request.generation["seed"])
                    video = np.clip(video + rng.normal(0, self.noise, video.shape), 0, 255).astype(np.uint8)
                out.append({"generated_video": video})
        return out


class SpinningModel(RecordingModel):
    """Busy-loops in Python for ``spin_s`` seconds on samples whose id ends with one of ``slow``."""

    def __init__(self, slow=(), spin_s: float = 30.0):
        super().__init__()
        self.slow, self.spin_s = set(slow), spin_s

    def generate(self, requests):
        for request in requests:
            if self._match(request, self.slow):
                end = time.monotonic() + self.spin_s
                while time.monotonic() < end:
                    pass
        return super().generate(requests)


class SteppingOnlyModel:
    """Only the step interface: the frame shifts one pixel right per action; a state is (frame, t)."""

    name = "stepping_only"
    version = "1.0"

    def start(self, request):
        return (initial_frame(request), 0)

    def step(self, state, actions):
        from wfeval.models.protocol import StepOutput

        frame, t = state
        frames = []
        for _ in actions:
            frame = np.roll(frame, 1, axis=1)
            frames.append(frame)
        return StepOutput((frame, t + len(actions)), np.stack(frames))


class TowardsPolicy:
    """A user policy (policy=user): always the action named ``action``."""

    def __init__(self, action: str = "right"):
        self.action = action

    def act(self, frame, context):
        return context.action_names.index(self.action)


class RewardingOracle:
    """The gridworld oracle's frames plus a reward head of its own: every step rewards 1 and ends the
    episode (task=policy_evaluation then scores returns with it, not with the frames)."""

    name = "rewarding_oracle"
    version = "1.0"

    def __init__(self):
        from wfeval.benchmarks.gridworld.baselines import OracleModel

        self.inner = OracleModel()

    def start(self, request):
        return self.inner.start(request)

    def step(self, state, actions):
        from wfeval.models.protocol import StepOutput

        out = self.inner.step(state, actions)
        return StepOutput(out.state, out.frames, reward=[1.0] * len(actions), done=[True] * len(actions))


class GrowingNoiseModel:
    """Stochastic (task=uncertainty): the gridworld oracle plus Gaussian noise whose σ grows with the
    frame (``step`` levels per frame), drawn from the request's seed; it reports that σ per predicted
    frame as its ``uncertainty`` (``inverted``: the reverse order, a report that misranks the errors)."""

    name = "growing_noise"
    version = "1.0"
    stochastic = True

    def __init__(self, step: float = 6.0, inverted: bool = False):
        from wfeval.benchmarks.gridworld.baselines import OracleModel

        self.step, self.inverted, self.oracle = float(step), bool(inverted), OracleModel()

    def generate(self, requests):
        import numpy as np

        from wfeval.models.protocol import Generated

        out = []
        for request in requests:
            video = self.oracle.generate_one(request).astype(np.float64)
            sigma = self.step * np.arange(1, len(video))
            rng = np.random.default_rng(int(request.generation["seed"]))
            noise = rng.normal(size=video[1:].shape) * sigma[:, None, None, None]
            moved = np.clip(np.rint(video[1:] + noise), 0, 255).astype(np.uint8)
            reported = sigma[::-1] if self.inverted else sigma
            out.append(Generated({"generated_video": np.concatenate([video[:1].astype(np.uint8), moved])},
                                 {"uncertainty": reported.tolist()}))
        return out
