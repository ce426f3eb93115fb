"""wfeval's arrays to the tensors the peer libraries read, in one place for every adapter.

Frames: wfeval gives N×H×W×3 uint8; the libraries read float N×3×H×W (channels first) in [0, 1],
optionally resized (bilinear) and normalised by a per-channel mean and std. Actions: wfeval gives
N×k integers (a discrete benchmark) or N×k×A floats (a continuous one); the libraries read one
float vector per action, a discrete action as its one-hot row of width ``width``.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np


def frames_tensor(frames: Any, device: Any = "cpu", size: int | Sequence[int] | None = None,
                  mean: Sequence[float] | None = None, std: Sequence[float] | None = None) -> Any:
    """N×H×W×3 uint8 frames as a float32 N×3×H'×W' tensor in [0, 1] (then ``(x - mean) / std``)."""
    import torch
    import torch.nn.functional as F

    array = np.asarray(frames)
    if array.ndim != 4 or array.shape[-1] != 3:
        raise ValueError(f"frames of shape {array.shape}; expected N×H×W×3")
    x = torch.from_numpy(np.ascontiguousarray(array)).to(device).permute(0, 3, 1, 2).float() / 255.0
    if size is not None:
        target = (int(size), int(size)) if isinstance(size, (int, np.integer)) else tuple(int(s) for s in size)
        if tuple(x.shape[-2:]) != target:
            x = F.interpolate(x, size=target, mode="bilinear", align_corners=False)
    if mean is not None or std is not None:
        m = torch.tensor(list(mean if mean is not None else [0.0, 0.0, 0.0]), device=x.device).view(1, 3, 1, 1)
        s = torch.tensor(list(std if std is not None else [1.0, 1.0, 1.0]), device=x.device).view(1, 3, 1, 1)
        x = (x - m) / s
    return x.contiguous()


def is_discrete(actions: Any) -> bool:
    """True for N×k integer actions (one index per action), False for N×k×A vectors."""
    array = np.asarray(actions)
    return array.ndim == 2 and array.dtype.kind in "iub"


def actions_tensor(actions: Any, width: int, device: Any = "cpu") -> Any:
    """N×k actions as a float32 N×k×``width`` tensor: discrete ones one-hot, vectors as they are."""
    import torch

    array = np.asarray(actions)
    if is_discrete(array):
        index = array.astype(np.int64)
        if index.size and (index.min() < 0 or index.max() >= width):
            raise ValueError(f"discrete actions {int(index.min())}..{int(index.max())} do not fit a one-hot of "
                             f"width {width} (the model's action_dim)")
        return torch.nn.functional.one_hot(torch.from_numpy(index), width).float().to(device)
    if array.ndim != 3 or array.shape[-1] != width:
        raise ValueError(f"actions of shape {array.shape}; expected N×k integers or N×k×{width} vectors")
    return torch.as_tensor(array, dtype=torch.float32, device=device)


def as_latents(z: Any) -> np.ndarray:
    """A tensor of N×... latents as N×D float64 numpy (wfeval's latent layout)."""
    return z.detach().reshape(z.shape[0], -1).to("cpu").double().numpy()


def linear_in_features(module: Any) -> int | None:
    """The input width of the first ``nn.Linear`` in ``module`` (an action encoder's action width)."""
    import torch

    for layer in module.modules() if isinstance(module, torch.nn.Module) else ():
        if isinstance(layer, torch.nn.Linear):
            return int(layer.in_features)
    return None
