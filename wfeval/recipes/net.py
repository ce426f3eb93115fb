"""The network of the learned-model recipe: one frame ahead from the last two frames and an action.

``FramePredictor`` sees the previous and the current frame (6 channels; at the first step both
are the context frame) and one discrete action. A strided "patchify" convolution turns the
64×64 frame into a grid of patch features (``patch``×``patch`` pixels each); the action's
embedding is added to every patch; ``blocks`` residual blocks of 3×3 convolutions move content
between neighbouring patches (each block widens the reach by two patches); a transposed
convolution decodes every patch back to pixels: new content and a gate. The next frame is

    next = gate · content + (1 − gate) · current

so copying the current frame (most pixels of a video game) is the easy default and the network
spends its capacity on what moves. Training also teaches the gate directly which pixels change
(see :mod:`wfeval.recipes.training`), so unchanged pixels stay exact over a long rollout. Values are in [-1, 1] (uint8 / 127.5 − 1).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, Mapping

import torch
from torch import nn


@dataclass(frozen=True)
class NetConfig:
    n_actions: int
    height: int = 64
    width: int = 64
    channels: int = 32
    patch: int = 8
    blocks: int = 2

    def __post_init__(self) -> None:
        for name in ("n_actions", "height", "width", "channels", "patch", "blocks"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < (0 if name == "blocks" else 1):
                raise ValueError(f"net.{name} must be a positive integer, got {value!r}")
        if self.height % self.patch or self.width % self.patch:
            raise ValueError(f"net.patch={self.patch} must divide the frame size {self.height}x{self.width}")

    def to_dict(self) -> dict[str, Any]:
        return asdict(self)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "NetConfig":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown net config key(s) {unknown}; known: {sorted(known)}")
        return cls(**dict(data))


class _Block(nn.Module):
    def __init__(self, channels: int):
        super().__init__()
        self.conv1 = nn.Conv2d(channels, channels, 3, padding=1)
        self.conv2 = nn.Conv2d(channels, channels, 3, padding=1)
        self.act = nn.GELU()

    def forward(self, x: torch.Tensor, action: torch.Tensor) -> torch.Tensor:
        return x + self.conv2(self.act(self.conv1(self.act(x + action))))


class FramePredictor(nn.Module):
    def __init__(self, config: NetConfig):
        super().__init__()
        self.config = config
        c, p = config.channels, config.patch
        self.embed = nn.Embedding(config.n_actions, c)
        self.stem = nn.Conv2d(6, c, kernel_size=p, stride=p)
        self.blocks = nn.ModuleList(_Block(c) for _ in range(config.blocks))
        self.head = nn.ConvTranspose2d(c, 4, kernel_size=p, stride=p)
        with torch.no_grad():  # start as "copy the current frame": the gate opens where things change
            self.head.bias[3].fill_(-4.0)

    def forward(self, previous: torch.Tensor, current: torch.Tensor, action: torch.Tensor,
                with_gate: bool = False) -> Any:
        """``previous``, ``current``: N×3×H×W in [-1, 1]; ``action``: N action ids → N×3×H×W in [-1, 1]
        (and the gate's logits, N×1×H×W, with ``with_gate``)."""
        a = self.embed(action)[:, :, None, None]
        x = self.stem(torch.cat([previous, current], dim=1)) + a
        for block in self.blocks:
            x = block(x, a)
        out = self.head(x)
        content, logits = torch.tanh(out[:, :3]), out[:, 3:]
        gate = torch.sigmoid(logits)
        pred = gate * content + (1 - gate) * current
        return (pred, logits) if with_gate else pred


def to_input(frames: Any, device: Any = None) -> torch.Tensor:
    """N×H×W×3 uint8 (numpy or tensor) → N×3×H×W float in [-1, 1]."""
    x = torch.as_tensor(frames, device=device)
    return x.permute(0, 3, 1, 2).float().div(127.5).sub(1.0)


def to_frames(x: torch.Tensor) -> torch.Tensor:
    """N×3×H×W in [-1, 1] → N×H×W×3 uint8 (rounded to the nearest level)."""
    return x.add(1.0).mul(127.5).round().clamp(0, 255).to(torch.uint8).permute(0, 2, 3, 1)
