"""Build the I3D feature network from :class:`~wfeval.features.weights.WeightsInfo`, once per process."""

from __future__ import annotations

import functools
import hashlib
import io
import warnings
from pathlib import Path

import torch
from torch import nn

from wfeval.features.i3d import InceptionI3D
from wfeval.features.weights import WeightsInfo, WeightsUnavailable, load_verified_state


class TorchScriptI3D(nn.Module):
    """StyleGAN-V's ``i3d_torchscript.pt`` called for raw 400-d logits on inputs already in [-1, 1] at 224."""

    def __init__(self, scripted: torch.jit.ScriptModule):
        super().__init__()
        self.scripted = scripted

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.scripted(x, rescale=False, resize=False, return_features=True)


def reproducible_math() -> None:
    """Full-precision float32 matmuls and convolutions (TF32 off) for numbers that do not depend on the GPU."""
    torch.backends.cuda.matmul.allow_tf32 = False
    torch.backends.cudnn.allow_tf32 = False
    torch.set_float32_matmul_precision("highest")


def pick_device(device: str = "auto") -> torch.device:
    """``auto`` → ``cuda`` when available, else ``cpu``."""
    if device == "auto":
        return torch.device("cuda" if torch.cuda.is_available() else "cpu")
    return torch.device(device)


def _verified_bytes(info: WeightsInfo) -> bytes:
    """The file's bytes, if they are still the ones :func:`resolve_weights` verified (``info.sha256``)."""
    data = Path(info.path).read_bytes()
    actual = hashlib.sha256(data).hexdigest()
    if actual != info.sha256:
        raise WeightsUnavailable(f"{info.path} changed since it was verified (sha256 {actual}, "
                                 f"verified {info.sha256}); not loaded")
    return data


@functools.lru_cache(maxsize=4)
def load_network(info: WeightsInfo, device: str = "cpu") -> nn.Module:
    """The evaluation-mode network on ``device`` (cached per weights and device), built from the
    very bytes whose sha256 ``info`` records."""
    data = _verified_bytes(info)
    if info.format == "torchscript":
        with warnings.catch_warnings():  # torch >= 2.9 deprecates TorchScript; StyleGAN-V's file is one
            warnings.simplefilter("ignore", DeprecationWarning)
            net: nn.Module = TorchScriptI3D(torch.jit.load(io.BytesIO(data), map_location="cpu"))
    elif info.format == "ported":
        net = InceptionI3D()
        state = load_verified_state(data, info.path)
        try:
            net.load_state_dict(state, strict=True)
        except RuntimeError as exc:
            raise WeightsUnavailable(f"{info.path}: not an I3D state dict: {str(exc)[:300]}") from exc
        net.fuse_batchnorm()
    else:
        raise WeightsUnavailable(f"unknown weights format {info.format!r}")
    net.eval().requires_grad_(False)
    if torch.device(device).type == "cpu":  # oneDNN's 3-D convolutions are ~2x faster channels-last
        net = net.to(memory_format=torch.channels_last_3d)
    return net.to(device)


def input_memory_format(device: torch.device) -> torch.memory_format:
    """The layout :func:`load_network` expects its input in on ``device``."""
    return torch.channels_last_3d if device.type == "cpu" else torch.contiguous_format
