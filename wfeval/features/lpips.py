"""LPIPS v0.1 (Zhang et al. 2018) in PyTorch, without torchvision.

The network is the ``lpips`` package's: the input in [-1, 1] shifted and scaled per channel
(``ScalingLayer``), the feature layers of torchvision's ImageNet AlexNet or VGG16 (``features.*``,
the same indices, so torchvision's state dict loads as it is), five taps (AlexNet: after each ReLU
of conv1..conv5; VGG16: relu1_2, relu2_2, relu3_3, relu4_3, relu5_3), each tap unit-normalised
over channels (``x / (||x|| + 1e-10)``), the squared difference of the two images' taps weighted
per channel by the linear head (a 1×1 convolution without bias), averaged over positions and
summed over the taps. ``tests/metrics/test_lpips_matches_reference.py`` checks it against
``lpips.LPIPS`` given identical weights.
"""

from __future__ import annotations

import functools
import hashlib
import io
from pathlib import Path

import torch
from torch import nn

from wfeval.features.lpips_weights import LPIPSWeights
from wfeval.features.weights import WeightsUnavailable

SHIFT = (-0.030, -0.088, -0.188)
SCALE = (0.458, 0.448, 0.450)
EPS = 1e-10

# (kind, in, out, kernel, stride, padding); "R" = ReLU, "M" = max pool 3/2 (AlexNet) or 2/2 (VGG)
_ALEX = [("C", 3, 64, 11, 4, 2), "R", "M", ("C", 64, 192, 5, 1, 2), "R", "M", ("C", 192, 384, 3, 1, 1), "R",
         ("C", 384, 256, 3, 1, 1), "R", ("C", 256, 256, 3, 1, 1), "R"]
_VGG_WIDTHS = [64, 64, "M", 128, 128, "M", 256, 256, 256, "M", 512, 512, 512, "M", 512, 512, 512]
TAPS = {"alex": (1, 4, 7, 9, 11), "vgg": (3, 8, 15, 22, 29)}  # index of the module whose output is tapped
CHANNELS = {"alex": (64, 192, 384, 256, 256), "vgg": (64, 128, 256, 512, 512)}
MIN_SIZE = {"alex": 31, "vgg": 16}  # smallest frame side the taps exist for (no pooling of an empty map)


def _features(net: str) -> nn.Sequential:
    layers: list[nn.Module] = []
    if net == "alex":
        for spec in _ALEX:
            if spec == "R":
                layers.append(nn.ReLU())
            elif spec == "M":
                layers.append(nn.MaxPool2d(kernel_size=3, stride=2))
            else:
                _, cin, cout, k, s, p = spec
                layers.append(nn.Conv2d(cin, cout, kernel_size=k, stride=s, padding=p))
    elif net == "vgg":
        cin = 3
        for width in _VGG_WIDTHS:
            if width == "M":
                layers.append(nn.MaxPool2d(kernel_size=2, stride=2))
            else:
                layers += [nn.Conv2d(cin, int(width), kernel_size=3, padding=1), nn.ReLU()]
                cin = int(width)
    else:
        raise ValueError(f"LPIPS net must be alex or vgg, got {net!r}")
    return nn.Sequential(*layers)


class LPIPSNetwork(nn.Module):
    """``forward(x0, x1)`` on ``N×3×H×W`` images in [-1, 1] → the ``N`` LPIPS distances."""

    def __init__(self, net: str = "alex"):
        super().__init__()
        self.net = net
        self.features = _features(net)
        self.taps = TAPS[net]
        self.heads = nn.ParameterList([nn.Parameter(torch.zeros(1, c, 1, 1)) for c in CHANNELS[net]])
        self.register_buffer("shift", torch.tensor(SHIFT)[None, :, None, None])
        self.register_buffer("scale", torch.tensor(SCALE)[None, :, None, None])

    def tapped(self, x: torch.Tensor) -> list[torch.Tensor]:
        out, h = [], (x - self.shift) / self.scale
        for i, layer in enumerate(self.features[: self.taps[-1] + 1]):
            h = layer(h)
            if i in self.taps:
                out.append(h)
        return out

    def forward(self, x0: torch.Tensor, x1: torch.Tensor) -> torch.Tensor:
        n = x0.shape[0]
        total = torch.zeros(n, dtype=x0.dtype, device=x0.device)
        for feats, head in zip(self.tapped(torch.cat([x0, x1])), self.heads):
            f = feats / (feats.square().sum(dim=1, keepdim=True).sqrt() + EPS)
            diff = (f[:n] - f[n:]).square()
            total = total + nn.functional.conv2d(diff, head).mean(dim=(1, 2, 3))
        return total


def _verified_bytes(path: str, sha256: str) -> bytes:
    data = Path(path).read_bytes()
    actual = hashlib.sha256(data).hexdigest()
    if actual != sha256:
        raise WeightsUnavailable(f"{path} changed since it was checked (sha256 {actual}, checked {sha256}); not loaded")
    return data


def _load(data: bytes, where: str) -> dict:
    try:
        state = torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as exc:  # truncated, not a torch file, or a pickle asking for code
        raise WeightsUnavailable(f"{where}: not a loadable state dict "
                                 f"({type(exc).__name__}: {str(exc)[:200]})") from None
    if not isinstance(state, dict) or not all(isinstance(v, torch.Tensor) for v in state.values()):
        raise WeightsUnavailable(f"{where}: not a state dict of tensors")
    return state


def _check_state(state: dict, expected: dict[str, tuple[int, ...]], where: str, allowed_extra: str = "") -> None:
    missing = sorted(set(expected) - set(state))
    extra = sorted(k for k in set(state) - set(expected) if not (allowed_extra and k.startswith(allowed_extra)))
    wrong = sorted(k for k in expected if k in state and tuple(state[k].shape) != expected[k])
    if missing or extra or wrong:
        raise WeightsUnavailable(f"{where}: not the expected layout (missing {missing[:4]}, unexpected {extra[:4]}, "
                                 f"wrong shape {wrong[:4]})")
    bad = [k for k in expected if not torch.isfinite(state[k]).all()]
    if bad:
        raise WeightsUnavailable(f"{where}: non-finite values in {bad[:4]}")


@functools.lru_cache(maxsize=4)
def load_lpips(weights: LPIPSWeights, device: str = "cpu") -> LPIPSNetwork:
    """The evaluation-mode network on ``device`` (once per weights and device), built from the very
    bytes whose sha256 ``weights`` records; the layout of both files is checked before use."""
    model = LPIPSNetwork(weights.net)
    backbone = _load(_verified_bytes(weights.backbone_path, weights.backbone_sha256), weights.backbone_path)
    expected = {f"features.{k}": tuple(v.shape) for k, v in model.features.state_dict().items()}
    _check_state(backbone, expected, weights.backbone_path, allowed_extra="classifier.")
    heads = _load(_verified_bytes(weights.heads_path, weights.heads_sha256), weights.heads_path)
    layout = {f"lin{i}.model.1.weight": (1, c, 1, 1) for i, c in enumerate(CHANNELS[weights.net])}
    _check_state(heads, layout, weights.heads_path)
    if any((heads[k] < 0).any() for k in layout):  # LPIPS trains its heads clamped to >= 0: distances are >= 0
        raise WeightsUnavailable(f"{weights.heads_path}: negative head weights; LPIPS heads are non-negative")
    with torch.no_grad():
        model.features.load_state_dict({k.removeprefix("features."): backbone[k] for k in expected}, strict=True)
        for i, param in enumerate(model.heads):
            param.copy_(heads[f"lin{i}.model.1.weight"].float())
    model.eval().requires_grad_(False)
    if torch.device(device).type == "cuda":  # full float32 convolutions: numbers that do not depend on the GPU
        from wfeval.features.network import reproducible_math

        reproducible_math()
    return model.to(device)
