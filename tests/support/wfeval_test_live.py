"""Test-only model objects for ``wfeval.evaluate`` (a torch module whose weights change in place)."""

from __future__ import annotations

import numpy as np
import torch

from wfeval.models.base import actions_of, initial_frame
from wfeval.models.protocol import StepOutput


class ShiftNet(torch.nn.Module):
    """Adds its one weight (rounded to a uint8 level) to the initial frame, repeated per action."""

    name = "shiftnet"

    def __init__(self, offset: float = 3.0):
        super().__init__()
        self.offset = torch.nn.Parameter(torch.tensor(float(offset)))

    def generate(self, requests):
        level = int(round(float(self.offset.detach())))
        out = []
        for request in requests:
            frame = initial_frame(request).astype(np.int16) + level
            video = np.repeat(np.clip(frame, 0, 255).astype(np.uint8)[None], len(actions_of(request)) + 1, axis=0)
            out.append({"generated_video": video})
        return out

    def start(self, request):  # the step interface: the shifted frame, held still
        level = int(round(float(self.offset.detach())))
        return np.clip(initial_frame(request).astype(np.int16) + level, 0, 255).astype(np.uint8)

    def step(self, state, actions):
        return StepOutput(state, np.repeat(state[None], len(actions), axis=0))


class Holder:
    """A plain wrapper holding its network in an attribute (the usual training-loop shape)."""

    name = "holder"

    def __init__(self, offset: float = 3.0):
        self.net = ShiftNet(offset)

    def generate(self, requests):
        return self.net.generate(requests)


class Stateless:
    """Holds an object whose contents Python cannot read (an iterator): its state cannot be seen."""

    name = "stateless"

    def __init__(self, source=None):
        self.source = source

    def generate(self, requests):
        return [{"generated_video": np.repeat(initial_frame(r)[None], len(actions_of(r)) + 1, axis=0)}
                for r in requests]
