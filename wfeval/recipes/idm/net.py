"""The inverse-dynamics network: three frames in, the action between the last two out.

Input: frames ``t−1, t, t+1`` (N×3×H×W each in [-1, 1]; at the first transition of a clip ``t−1``
is ``t`` itself) and their two differences, 15 channels. A strided "patchify" convolution (one
feature vector per ``patch``×``patch`` block: it sees every pixel of its block, so sub-block motion
is kept in its channels), two 3×3 convolutions, then the maximum and the mean over all positions
(what moved may be anywhere), and a linear head: one logit per action (discrete) or one value per
action element, standardised by the training data's mean and spread (continuous). With ``coords`` two
more input channels hold each pixel's column and row in [-1, 1]: the pooled features can then say
*where* something moved, which an absolute action needs (Push-T's action is a target position: the
agent's place plus where it is heading); without them the features are the same wherever it moved.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, fields
from typing import Any, Mapping

import numpy as np
import torch
from torch import nn

KINDS = ("discrete", "continuous")


@dataclass(frozen=True)
class IDMConfig:
    n_out: int  # actions (discrete) or action elements (continuous)
    kind: str = "discrete"
    channels: int = 32
    patch: int = 8
    coords: bool = False  # two channels of pixel coordinates (an absolute position becomes readable)

    def __post_init__(self) -> None:
        if not isinstance(self.coords, bool):
            raise ValueError(f"idm.coords must be true or false, got {self.coords!r}")
        if self.kind not in KINDS:
            raise ValueError(f"idm.kind must be one of {', '.join(KINDS)}, got {self.kind!r}")
        for name in ("n_out", "channels", "patch"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int) or value < 1:
                raise ValueError(f"idm.{name} must be a positive integer, got {value!r}")

    def to_dict(self) -> dict[str, Any]:
        out = asdict(self)
        if not self.coords:  # as the sidecars written before coordinates existed
            out.pop("coords")
        return out

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> "IDMConfig":
        known = {f.name for f in fields(cls)}
        unknown = sorted(set(data) - known)
        if unknown:
            raise ValueError(f"unknown IDM config key(s) {unknown}; known: {sorted(known)}")
        return cls(**dict(data))


class InverseDynamics(nn.Module):
    def __init__(self, config: IDMConfig):
        super().__init__()
        self.config = config
        c, p = config.channels, config.patch
        self.features = nn.Sequential(
            nn.Conv2d(17 if config.coords else 15, c, kernel_size=p, stride=p), nn.ReLU(),
            nn.Conv2d(c, c, 3, padding=1), nn.ReLU(),
            nn.Conv2d(c, c, 3, padding=1), nn.ReLU(),
        )
        self.head = nn.Linear(2 * c, config.n_out)

    def forward(self, previous: torch.Tensor, current: torch.Tensor, following: torch.Tensor) -> torch.Tensor:
        parts = [previous, current, following, current - previous, following - current]
        if self.config.coords:
            n, _, h, w = current.shape
            rows = torch.linspace(-1.0, 1.0, h, device=current.device).view(1, 1, h, 1).expand(n, 1, h, w)
            cols = torch.linspace(-1.0, 1.0, w, device=current.device).view(1, 1, 1, w).expand(n, 1, h, w)
            parts += [cols, rows]
        x = torch.cat(parts, dim=1)
        z = self.features(x)
        return self.head(torch.cat([z.amax(dim=(2, 3)), z.mean(dim=(2, 3))], dim=1))


def to_input(frames: Any) -> torch.Tensor:
    """N×H×W×3 uint8 → N×3×H×W float in [-1, 1]."""
    return torch.as_tensor(np.ascontiguousarray(frames)).permute(0, 3, 1, 2).float().div(127.5).sub(1.0)


def windows(video: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(frames t−1, t, t+1) of every transition t = 0 … T−2 of a T-frame video (t−1 = t at t = 0)."""
    t = np.arange(len(video) - 1)
    return video[np.maximum(t - 1, 0)], video[t], video[t + 1]
