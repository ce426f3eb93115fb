"""Inception-I3D (Kinetics-400) in PyTorch, with TensorFlow "SAME" padding semantics.

The network of Carreira & Zisserman (2017) as published on TF-hub (``i3d-kinetics-400``) and used
by FVD: input ``[B, 3, T, 224, 224]`` in [-1, 1]; output the 400 pre-softmax logits averaged over
time. What makes a port reproduce the TensorFlow numbers:

* every convolution and max pool pads like TF ``"SAME"``: ``total = max((ceil(n/s)-1)*s + k - n, 0)``
  split ``total // 2`` before and the rest after (asymmetric when the stride is 2);
* convolutions pad with zeros, max pools never pick a padded position (padding is ``-inf``);
* BatchNorm has no scale: ``(x - mean) / sqrt(var + 1e-3) + beta``;
* the logits layer is a 1×1×1 convolution with bias after a VALID ``2×7×7`` average pool.

Parameter names follow :data:`BLOCKS`; :mod:`wfeval.features.convert` maps the original
checkpoint onto them.
"""

from __future__ import annotations

import math

import torch
import torch.nn.functional as F
from torch import nn

from wfeval.features.preprocess import MIN_FRAMES

BN_EPSILON = 1e-3
NUM_CLASSES = 400
# Mixed blocks: (branch_0 1x1, branch_1 1x1, branch_1 3x3, branch_2 1x1, branch_2 3x3, branch_3 1x1)
BLOCKS: dict[str, tuple[int, ...]] = {
    "Mixed_3b": (64, 96, 128, 16, 32, 32),
    "Mixed_3c": (128, 128, 192, 32, 96, 64),
    "Mixed_4b": (192, 96, 208, 16, 48, 64),
    "Mixed_4c": (160, 112, 224, 24, 64, 64),
    "Mixed_4d": (128, 128, 256, 24, 64, 64),
    "Mixed_4e": (112, 144, 288, 32, 64, 64),
    "Mixed_4f": (256, 160, 320, 32, 128, 128),
    "Mixed_5b": (256, 160, 320, 32, 128, 128),
    "Mixed_5c": (384, 192, 384, 48, 128, 128),
}


def same_padding(size: int, kernel: int, stride: int) -> tuple[int, int]:
    """TensorFlow ``"SAME"`` padding (before, after) of one dimension."""
    out = math.ceil(size / stride)
    total = max((out - 1) * stride + kernel - size, 0)
    return total // 2, total - total // 2


def _pads(x: torch.Tensor, kernel: tuple[int, ...], stride: tuple[int, ...]) -> list[tuple[int, int]]:
    return [same_padding(n, k, s) for n, k, s in zip(x.shape[2:], kernel, stride)]


def _flat(pads: list[tuple[int, int]]) -> tuple[int, ...]:
    """(T, H, W) pairs to F.pad's last-dimension-first order."""
    return tuple(p for pair in reversed(pads) for p in pair)


class TFBatchNorm(nn.Module):
    """Inference BatchNorm without scale (Sonnet v1 / TF-hub I3D): ``(x - mean) * rsqrt(var + eps) + beta``."""

    def __init__(self, channels: int, eps: float = BN_EPSILON):
        super().__init__()
        self.eps = eps
        self.register_buffer("beta", torch.zeros(channels))
        self.register_buffer("mean", torch.zeros(channels))
        self.register_buffer("var", torch.ones(channels))

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        scale = torch.rsqrt(self.var + self.eps)
        shift = self.beta - self.mean * scale
        return x * scale.view(1, -1, 1, 1, 1) + shift.view(1, -1, 1, 1, 1)


class Unit3D(nn.Module):
    """Conv3d (TF SAME) → BatchNorm (no scale) → ReLU, or a plain biased conv for the logits.

    :meth:`fuse` folds the BatchNorm into the convolution (``w·s``, ``β − μ·s`` with
    ``s = 1/√(σ² + ε)``) for inference: the same function with fewer passes over memory.
    """

    def __init__(self, cin: int, cout: int, kernel: tuple[int, int, int] = (1, 1, 1),
                 stride: tuple[int, int, int] = (1, 1, 1), *, logits: bool = False):
        super().__init__()
        self.kernel, self.stride, self.activation = kernel, stride, not logits
        self.conv = nn.Conv3d(cin, cout, kernel, stride=stride, bias=logits)
        self.bn: TFBatchNorm | None = None if logits else TFBatchNorm(cout)

    @torch.no_grad()
    def fuse(self) -> None:
        if self.bn is None:
            return
        scale = torch.rsqrt(self.bn.var.double() + self.bn.eps)
        weight = self.conv.weight.double() * scale.view(-1, 1, 1, 1, 1)
        bias = self.bn.beta.double() - self.bn.mean.double() * scale
        self.conv.weight.copy_(weight.to(self.conv.weight.dtype))
        self.conv.bias = nn.Parameter(bias.to(self.conv.weight.dtype), requires_grad=False)
        self.bn = None

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        pads = _pads(x, self.kernel, self.stride)
        if all(a == b for a, b in pads):  # symmetric: let the convolution pad (no copy)
            x = F.conv3d(x, self.conv.weight, self.conv.bias, self.stride, tuple(a for a, _ in pads))
        else:
            x = F.conv3d(F.pad(x, _flat(pads)), self.conv.weight, self.conv.bias, self.stride)
        if self.bn is not None:
            x = self.bn(x)
        return F.relu(x, inplace=True) if self.activation else x


def max_pool_same(x: torch.Tensor, kernel: tuple[int, int, int], stride: tuple[int, int, int]) -> torch.Tensor:
    """Max pool with TF SAME padding; padded positions are ``-inf`` so they are never picked."""
    pads = _pads(x, kernel, stride)
    before = tuple(a for a, _ in pads)
    if all(a == b for a, b in pads):  # max_pool3d's own padding is implicitly -inf
        return F.max_pool3d(x, kernel, stride, before)
    if _ceil_mode_is_same(x, kernel, stride, pads):  # one more (clipped) window at the end: no padded copy
        return F.max_pool3d(x, kernel, stride, before, ceil_mode=True)
    return F.max_pool3d(F.pad(x, _flat(pads), value=float("-inf")), kernel, stride)


def _ceil_mode_is_same(x: torch.Tensor, kernel: tuple[int, ...], stride: tuple[int, ...],
                       pads: list[tuple[int, int]]) -> bool:
    """Whether ``ceil_mode`` pooling with the "before" padding gives TF SAME's windows: the same
    starts, one more pad at the end at most, and the same number of windows."""
    for n, k, s, (a, b) in zip(x.shape[2:], kernel, stride, pads):
        if b - a not in (0, 1) or 2 * a > k:
            return False
        out = -(-(n + 2 * a - k) // s) + 1
        if (out - 1) * s >= n + a:  # PyTorch drops a last window that would start in the end padding
            out -= 1
        if out != math.ceil(n / s):
            return False
    return True


class InceptionBlock(nn.Module):
    """Four branches concatenated on channels: 1x1 | 1x1→3x3 | 1x1→3x3 | maxpool 3x3 (stride 1)→1x1."""

    def __init__(self, cin: int, widths: tuple[int, ...]):
        super().__init__()
        self.b0 = Unit3D(cin, widths[0])
        self.b1a = Unit3D(cin, widths[1])
        self.b1b = Unit3D(widths[1], widths[2], (3, 3, 3))
        self.b2a = Unit3D(cin, widths[3])
        self.b2b = Unit3D(widths[3], widths[4], (3, 3, 3))
        self.b3 = Unit3D(cin, widths[5])

    @staticmethod
    def out_channels(widths: tuple[int, ...]) -> int:
        return widths[0] + widths[2] + widths[4] + widths[5]

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return torch.cat([
            self.b0(x),
            self.b1b(self.b1a(x)),
            self.b2b(self.b2a(x)),
            self.b3(max_pool_same(x, (3, 3, 3), (1, 1, 1))),
        ], dim=1)


class InceptionI3D(nn.Module):
    """Kinetics-400 Inception-I3D up to the time-averaged logits (the FVD feature)."""

    def __init__(self, num_classes: int = NUM_CLASSES):
        super().__init__()
        self.Conv3d_1a_7x7 = Unit3D(3, 64, (7, 7, 7), (2, 2, 2))
        self.Conv3d_2b_1x1 = Unit3D(64, 64)
        self.Conv3d_2c_3x3 = Unit3D(64, 192, (3, 3, 3))
        cin = 192
        for name, widths in BLOCKS.items():
            setattr(self, name, InceptionBlock(cin, widths))
            cin = InceptionBlock.out_channels(widths)
        self.Logits = Unit3D(cin, num_classes, logits=True)

    def fuse_batchnorm(self) -> InceptionI3D:
        """Fold every BatchNorm into its convolution (inference only; returns self)."""
        for module in self.modules():
            if isinstance(module, Unit3D):
                module.fuse()
        return self

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """``[B, 3, T, 224, 224]`` in [-1, 1] → ``[B, 400]`` logits averaged over time."""
        if x.ndim != 5 or x.shape[1] != 3:
            raise ValueError(f"I3D expects [batch, 3, frames, height, width], got {tuple(x.shape)}")
        if x.shape[2] < MIN_FRAMES:
            raise ValueError(f"I3D needs at least {MIN_FRAMES} frames per clip, got {x.shape[2]}")
        x = self.Conv3d_1a_7x7(x)
        x = max_pool_same(x, (1, 3, 3), (1, 2, 2))
        x = self.Conv3d_2c_3x3(self.Conv3d_2b_1x1(x))
        x = max_pool_same(x, (1, 3, 3), (1, 2, 2))
        x = self.Mixed_3c(self.Mixed_3b(x))
        x = max_pool_same(x, (3, 3, 3), (2, 2, 2))
        for name in ("Mixed_4b", "Mixed_4c", "Mixed_4d", "Mixed_4e", "Mixed_4f"):
            x = getattr(self, name)(x)
        x = max_pool_same(x, (2, 2, 2), (2, 2, 2))
        x = self.Mixed_5c(self.Mixed_5b(x))
        x = F.avg_pool3d(x, (2, 7, 7), stride=1)  # VALID
        logits = self.Logits(x)  # [B, 400, T', 1, 1]
        if logits.shape[3:] != (1, 1):
            raise ValueError(f"I3D expects 224×224 frames (spatial logits {tuple(logits.shape[3:])} ≠ 1×1)")
        return logits.mean(dim=(2, 3, 4))
