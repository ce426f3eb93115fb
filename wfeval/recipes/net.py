"""The network of the learned-model recipe: one frame ahead from the last two frames and an action.

``FramePredictor`` sees the previous and the current frame (6 channels; at the first step both
are the context frame) and one action. A strided "patchify" convolution turns the
64×64 frame into a grid of patch features (``patch``×``patch`` pixels each); the action's
embedding is added to every patch; ``blocks`` residual blocks of 3×3 convolutions move content
between neighbouring patches (each block widens the reach by two patches); a transposed
convolution decodes every patch back to pixels: new content and a gate. The next frame is

    next = gate · content + (1 − gate) · current

so copying the current frame (most pixels of a video game) is the easy default and the network
spends its capacity on what moves. Training also teaches the gate directly which pixels change
(see :mod:`wfeval.recipes.training`), so unchanged pixels stay exact over a long rollout. Values are in [-1, 1] (uint8 / 127.5 − 1).

The action (``action_kind``): a discrete id is looked up in an embedding table; a continuous vector
(Push-T's target position) is scaled to [-1, 1] by the bounds the config holds (``action_low``,
``action_high``: the benchmark's declared bounds) and, beside each patch's own place (its column and
row in [-1, 1]), passed through a two-layer perceptron applied patch by patch: the action's features
may then differ from patch to patch — where the action points relative to a patch, when the action is
a target position — which one vector added to every patch cannot say.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from typing import Any, Mapping

import torch
from torch import nn


ACTION_KINDS = ("discrete", "continuous")


@dataclass(frozen=True)
class NetConfig:
    n_actions: int  # discrete: action ids; continuous: elements of one action vector
    height: int = 64
    width: int = 64
    channels: int = 32
    patch: int = 8
    blocks: int = 2
    action_kind: str = "discrete"
    action_low: tuple[float, ...] = ()  # continuous: one bound per element, mapped to -1 ...
    action_high: tuple[float, ...] = ()  # ... and +1

    def __post_init__(self) -> None:
        for name in ("n_actions", "height", "width", "channels", "patch", "blocks"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < (0 if name == "blocks" else 1):
                raise ValueError(f"net.{name} must be a positive integer, got {value!r}")
        if self.height % self.patch or self.width % self.patch:
            raise ValueError(f"net.patch={self.patch} must divide the frame size {self.height}x{self.width}")
        if self.action_kind not in ACTION_KINDS:
            raise ValueError(f"net.action_kind must be one of {ACTION_KINDS}, got {self.action_kind!r}")
        object.__setattr__(self, "action_low", tuple(float(v) for v in self.action_low))
        object.__setattr__(self, "action_high", tuple(float(v) for v in self.action_high))
        if self.action_kind == "discrete" and (self.action_low or self.action_high):
            raise ValueError("net.action_low/action_high: a discrete action has no bounds")
        if self.action_kind == "continuous":
            low, high = self.action_low, self.action_high
            if len(low) != self.n_actions or len(high) != self.n_actions:
                raise ValueError(f"net.action_low/action_high: one bound per action element ({self.n_actions}), "
                                 f"got {len(low)} and {len(high)}")
            if not all(math.isfinite(lo) and math.isfinite(hi) and lo < hi for lo, hi in zip(low, high)):
                raise ValueError(f"net.action_low/action_high: finite bounds with low < high, got {low}, {high}")

    def to_dict(self) -> dict[str, Any]:
        """As the checkpoint's sidecar holds it (a discrete config without the continuous keys, as before)."""
        out = asdict(self)
        if self.action_kind == "discrete":
            for key in ("action_kind", "action_low", "action_high"):
                out.pop(key)
        return out

    @classmethod
    def for_actions(cls, space: Any, n_ids: int, data_actions: Any = None, **options: Any) -> "NetConfig":
        """The config for a recording's actions: ``n_ids`` discrete ids when ``space`` (an
        :class:`~wfeval.api.ActionSpace`, or None) is discrete or absent; else its vectors, scaled by its
        declared bounds (an unbounded space: by the range of ``data_actions``, the recorded ones)."""
        if space is None or not space.is_continuous:
            return cls(n_actions=int(n_ids), **options)
        found = space.bounds()
        if found is None:
            import numpy as np

            flat = np.asarray(data_actions, np.float64).reshape(-1, space.size)
            found = (tuple(flat.min(axis=0)), tuple(np.maximum(flat.max(axis=0), flat.min(axis=0) + 1e-6)))
        return cls(n_actions=space.size, action_kind="continuous", action_low=found[0], action_high=found[1],
                   **options)

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
        if config.action_kind == "discrete":
            self.embed = nn.Embedding(config.n_actions, c)
        else:
            self.embed = nn.Sequential(nn.Conv2d(config.n_actions + 2, c, 1), nn.GELU(), nn.Conv2d(c, c, 1))
            gh, gw = config.height // p, config.width // p
            rows = torch.linspace(-1.0, 1.0, gh).view(gh, 1).expand(gh, gw)
            cols = torch.linspace(-1.0, 1.0, gw).view(1, gw).expand(gh, gw)
            self.register_buffer("places", torch.stack([cols, rows])[None], persistent=False)
            low, high = torch.tensor(config.action_low), torch.tensor(config.action_high)
            self.register_buffer("action_centre", (low + high) / 2, persistent=False)
            self.register_buffer("action_scale", (high - low) / 2, persistent=False)
        self.stem = nn.Conv2d(6, c, kernel_size=p, stride=p)
        self.blocks = nn.ModuleList(_Block(c) for _ in range(config.blocks))
        self.head = nn.ConvTranspose2d(c, 4, kernel_size=p, stride=p)
        with torch.no_grad():  # start as "copy the current frame": the gate opens where things change
            self.head.bias[3].fill_(-4.0)

    def forward(self, previous: torch.Tensor, current: torch.Tensor, action: torch.Tensor,
                with_gate: bool = False) -> Any:
        """``previous``, ``current``: N×3×H×W in [-1, 1]; ``action``: N action ids (discrete) or N×D
        vectors in the action space's units (continuous) → N×3×H×W in [-1, 1] (and the gate's logits,
        N×1×H×W, with ``with_gate``)."""
        x = self.stem(torch.cat([previous, current], dim=1))
        if self.config.action_kind == "discrete":
            a = self.embed(action)[:, :, None, None]
        else:
            scaled = (action.float() - self.action_centre) / self.action_scale
            grid = self.places.expand(len(scaled), -1, -1, -1)
            a = self.embed(torch.cat([scaled[:, :, None, None].expand(-1, -1, *grid.shape[2:]), grid], dim=1))
        x = x + a
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
