"""Learned perceptual metrics: ``lpips``.

``lpips(preds, target)`` takes two videos of one shape, ``T×H×W×3`` or ``B×T×H×W×3`` (numpy
arrays or torch tensors, uint8 or float with ``data_range``; see :mod:`wfeval.functional._video`),
maps each frame to [-1, 1] (``2·x/data_range − 1``, the input the ``lpips`` package expects) and
returns the LPIPS v0.1 distance of each frame pair (:mod:`wfeval.features.lpips`), averaged over
frames unless ``per_frame``. It computes in float32 on the device of a tensor input (a numpy input:
on the CPU, the result a float64 numpy array). ``weights``: a
:class:`~wfeval.features.lpips_weights.LPIPSWeights`; by default the staged official weights of
``net`` (``python -m wfeval.features.fetch lpips``; missing ones raise ``WeightsUnavailable``
naming that command). Frames need 3 channels and at least 31×31 (alex) / 16×16 (vgg) pixels.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from wfeval.functional._video import check_pair, is_tensor, resolve_data_range

__all__ = ["lpips"]

#: frames (pairs) per forward pass: at most this many pixels per frame × chunk, by network
_CHUNK_PIXELS = {"alex": 1 << 22, "vgg": 1 << 19}


def lpips(preds: Any, target: Any, *, net: str = "alex", data_range: float | None = None,
          per_frame: bool = False, weights: Any = None) -> Any:
    """LPIPS v0.1 distance per frame (0 for identical frames), averaged over frames unless ``per_frame``."""
    import torch

    from wfeval.features.lpips import MIN_SIZE, load_lpips
    from wfeval.features.lpips_weights import resolve_lpips_weights

    check_pair(preds, target)
    data_range = resolve_data_range(preds, data_range, "lpips")
    *lead, h, w, c = preds.shape
    if c != 3:
        raise ValueError(f"lpips: needs RGB frames (3 channels), got {c}")
    weights = weights if weights is not None else resolve_lpips_weights(net)
    if min(h, w) < MIN_SIZE[weights.net]:
        raise ValueError(f"lpips: frames must be at least {MIN_SIZE[weights.net]}×{MIN_SIZE[weights.net]} for "
                         f"net={weights.net}, got {h}×{w}")
    tensor_input = is_tensor(preds)
    device = preds.device if tensor_input else torch.device("cpu")
    model = load_lpips(weights, str(device))
    x, y = (v if tensor_input else torch.from_numpy(np.ascontiguousarray(v)) for v in (preds, target))
    x, y = (v.reshape(-1, h, w, c).to(device) for v in (x, y))
    step = max(1, _CHUNK_PIXELS[weights.net] // (h * w))
    parts = []
    with torch.inference_mode():
        for i in range(0, x.shape[0], step):
            a, b = (v[i:i + step].permute(0, 3, 1, 2).to(torch.float32) / (data_range / 2.0) - 1.0 for v in (x, y))
            parts.append(model(a, b))
    curve = torch.cat(parts)
    # identical frames are exactly 0 (the distance of equal features): not whatever rounding the
    # frame's position in the batch gives (oneDNN takes other kernels for a batch's tail, ~1e-9)
    curve = torch.where((x == y).reshape(x.shape[0], -1).all(dim=1), torch.zeros_like(curve), curve).reshape(*lead)
    result = curve if per_frame else curve.mean(dim=-1)
    return result if tensor_input else result.double().cpu().numpy()
