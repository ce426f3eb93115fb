"""Misbehaving models for the robustness corpus, loaded by ``model=python model.object._target_=...``."""

from __future__ import annotations

import numpy as np

from wfeval.benchmarks.gridworld.baselines import OracleModel


class Misbehaving(OracleModel):
    """The oracle, whose output for the samples listed in ``bad`` is spoiled the way ``mode`` says."""

    def __init__(self, mode: str = "float01", bad=(1,), name: str = "misbehaving"):
        super().__init__(name)
        self.mode, self.bad = mode, {int(i) for i in bad}

    def generate_one(self, request):
        video = super().generate_one(request)
        if int(request.sample_id.rsplit("-", 1)[1]) not in self.bad:
            return video
        return spoil(video, self.mode)


def spoil(video: np.ndarray, mode: str):
    if mode == "float01":
        return video.astype(np.float64) / 255.0
    if mode == "float255":
        return video.astype(np.float32)
    if mode == "int64x1000":
        return video.astype(np.int64) * 1000
    if mode == "two_d":
        return video[0, :, :, 0]
    if mode == "short":
        return video[:-1]
    if mode == "small":
        return video[:, ::2, ::2]
    if mode == "nan":
        out = video.astype(np.float32) / 255.0
        out[0, 0, 0, 0] = np.nan
        return out
    raise ValueError(mode)


class FailingSetup(OracleModel):
    def setup(self):
        raise RuntimeError("CUDA out of memory while loading the checkpoint")


class FloatModel(OracleModel):
    """Every output as float in [0, 1]: correct when ``model.output_range=[0,1]`` is declared."""

    def generate_one(self, request):
        return super().generate_one(request).astype(np.float64) / 255.0


# ---- round 3: user code that misbehaves on the new surfaces ------------------------------------


def _scripted(context):
    return context.request.controls["actions"][context.step]


class ZeroingPolicy:
    """Normalises the frame it is handed in place (``frame[:] = 0``), then follows the script."""

    def act(self, frame, context):
        frame[:] = 0
        return _scripted(context)


class BadActionPolicy:
    """Follows the script, except on sample ``bad`` at step ``step``, where it returns ``value``."""

    def __init__(self, value=2.7, bad: int = 1, step: int = 0):
        self.value, self.bad, self.step = value, int(bad), int(step)

    def act(self, frame, context):
        index = int(context.request.sample_id.rsplit("-", 1)[1])
        if index == self.bad and context.step == self.step:
            return self.value
        if "actions" not in context.request.controls:  # policy evaluation: no script, always right
            return list(context.action_names).index("right")
        return _scripted(context)


class ExitingPolicy:
    def act(self, frame, context):
        import sys

        sys.exit(0)


class BufferReusingModel(OracleModel):
    """The oracle, stepping into one output buffer it reuses on every step (a common optimisation)."""

    name = "buffer_reusing"

    def step(self, state, actions):
        from wfeval.models.protocol import StepOutput

        out = super().step(state, actions)
        buffer = getattr(self, "_buffer", None)
        if buffer is None or buffer.shape != out.frames.shape:
            buffer = self._buffer = np.empty_like(out.frames)
        buffer[...] = out.frames
        return StepOutput(out.state, buffer)


class ExitingModel(OracleModel):
    def generate_one(self, request):
        import sys

        sys.exit(0)


class ExitingSetupModel(OracleModel):
    def setup(self):
        import sys

        sys.exit(0)


class CheckpointModel(OracleModel):
    """The oracle brightened by the number written in ``checkpoint`` (a stand-in for trained weights)."""

    name = "checkpointed"

    def __init__(self, checkpoint: str = ""):
        super().__init__(self.name)
        self.checkpoint = checkpoint

    def generate_one(self, request):
        from pathlib import Path

        level = int(Path(self.checkpoint).read_text().strip() or 0)
        return np.clip(super().generate_one(request).astype(np.int64) + level, 0, 255).astype(np.uint8)


class MutatingMetric:
    """A user metric that normalises the generated video it reads in place, then counts its frames."""

    name = "mutating"
    version = "1.0"
    required_artifacts = ("generated_video",)
    higher_is_better = None
    bounds = (0.0, None)

    def compute_sample(self, request, result):
        from wfeval.metrics.outcomes import scored
        from wfeval.storage.artifacts import read_array

        video = read_array(result.artifacts["generated_video"])
        video[:] = 0  # a read-only stored array: this raises, and only this metric's row says so
        return scored(request.sample_id, self.name, float(video.shape[0]))

    def aggregate(self, results):
        from wfeval.metrics.base import default_aggregate

        return default_aggregate(self.name, results)


class ExitingMetric(MutatingMetric):
    name = "exiting"

    def compute_sample(self, request, result):
        import sys

        sys.exit(0)


class BadValueMetric(MutatingMetric):
    """Returns ``value`` for sample 1 and 0.5 elsewhere; declares the range [0, 1]."""

    name = "bad_value"
    bounds = (0.0, 1.0)

    def __init__(self, value=0.5):
        self.value = value

    def compute_sample(self, request, result):
        from wfeval.metrics.outcomes import scored

        bad = int(request.sample_id.rsplit("-", 1)[1]) == 1
        value = self.value if bad else 0.5
        return scored(request.sample_id, self.name, float(value) if value in ("nan", "inf") else value)


class FingerprintReturnsInt(OracleModel):
    """The oracle, whose fingerprint() returns an int (neither a dict, bytes nor a str)."""

    def fingerprint(self):
        return 3


class BadRewardOracle(OracleModel):
    """The oracle stepping with no reward of its own (the benchmark's, read off the frames), except on
    sample ``bad``, whose first step returns a reward/done spoiled the way ``mode`` says."""

    def __init__(self, mode: str = "nan_reward", bad: int = 1):
        super().__init__("bad_reward")
        self.mode, self.bad = mode, int(bad)

    def start(self, request):
        return {"inner": super().start(request), "bad": int(request.sample_id.rsplit("-", 1)[1]) == self.bad}

    def step(self, state, actions):
        from wfeval.models.protocol import StepOutput

        out = super().step(state["inner"], actions)
        new = {"inner": out.state, "bad": state["bad"]}
        if not state["bad"]:
            return StepOutput(new, out.frames)
        reward, done = {"long": ([5.0, 0.0, 0.0], False), "done_str": (0.0, "False"), "nan_reward": (float("nan"), False),
                        "inf_reward": (float("inf"), False), "text": ("1", False)}[self.mode]
        return StepOutput(new, out.frames, reward=reward, done=done)
