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
