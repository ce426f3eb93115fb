"""The honest lower rungs: reference measures on the pixels that move, and the horizon over which a
prediction beats holding the first frame (numpy, float64).

A static background inflates PSNR and SSIM: most pixels of a clip never change, so holding the
first frame already matches them. These measures look only where the reference changes:

- ``dynamic_mask(reference, tolerance)``: the ``H×W`` pixels whose value changes over the reference
  clip by more than ``tolerance`` (peak to peak over its frames, in any channel);
- ``dynamic_psnr``: per frame, the PSNR of the MSE over the dynamic pixels (all channels), capped at
  ``max_db``; ``dynamic_ssim``: per frame, the mean of the SSIM map (the ``ssim`` of
  :mod:`wfeval.functional.reference`: Gaussian 11×11, valid region, channel mean) over the dynamic
  pixels that lie in its valid region;
- ``break_even_horizon(preds, target, held)``: the number of leading frames on which the prediction's
  MSE is below that of ``held`` (the frame a ``static`` model repeats); a frame both match exactly is
  no break-even (a perfect prediction cannot beat a perfect hold).
"""

from __future__ import annotations

import numpy as np

from wfeval.functional.reference import SSIM_K1, SSIM_K2, SSIM_RADIUS, _blur, _db

__all__ = ["dynamic_mask", "dynamic_psnr", "dynamic_ssim", "break_even_horizon"]


def _frames(video: np.ndarray) -> np.ndarray:
    video = np.asarray(video, dtype=np.float64)
    if video.ndim != 4:
        raise ValueError(f"expected a T×H×W×C video, got shape {video.shape}")
    return video


def dynamic_mask(reference: np.ndarray, tolerance: float = 0.0) -> np.ndarray:
    """``H×W`` bool: the pixels whose value over the clip's frames spans more than ``tolerance``
    (peak to peak, in the input's units) in at least one channel."""
    ref = _frames(reference)
    return (ref.max(axis=0) - ref.min(axis=0) > float(tolerance)).any(axis=-1)


def _check(preds: np.ndarray, target: np.ndarray, mask: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    preds, target, mask = _frames(preds), _frames(target), np.asarray(mask, dtype=bool)
    if preds.shape != target.shape or mask.shape != target.shape[1:3]:
        raise ValueError(f"shapes differ: preds {preds.shape}, target {target.shape}, mask {mask.shape}")
    if not mask.any():
        raise ValueError("the mask selects no pixel")
    return preds, target, mask


def dynamic_psnr(preds: np.ndarray, target: np.ndarray, mask: np.ndarray, *, data_range: float = 255.0,
                 max_db: float = 100.0) -> np.ndarray:
    """Per frame: PSNR (dB, capped at ``max_db``) of the squared error over the ``mask`` pixels."""
    preds, target, mask = _check(preds, target, mask)
    errors = np.square(preds[:, mask] - target[:, mask]).mean(axis=(1, 2))
    return np.minimum(_db(errors, float(data_range), None), float(max_db))


def dynamic_ssim(preds: np.ndarray, target: np.ndarray, mask: np.ndarray, *, data_range: float = 255.0) -> np.ndarray:
    """Per frame: the mean SSIM map value over the ``mask`` pixels inside the valid region (NaN for
    every frame when none is: the mask lies within 5 pixels of the border)."""
    preds, target, mask = _check(preds, target, mask)
    r = SSIM_RADIUS
    inner = mask[r:-r, r:-r]
    if not inner.any():
        return np.full(len(preds), np.nan)
    x, y = (np.ascontiguousarray(v.transpose(0, 3, 1, 2)) / float(data_range) for v in (preds, target))
    mx, my = _blur(x), _blur(y)
    vx, vy, vxy = _blur(x * x) - mx * mx, _blur(y * y) - my * my, _blur(x * y) - mx * my
    c1, c2 = SSIM_K1**2, SSIM_K2**2
    s = ((2 * mx * my + c1) * (2 * vxy + c2)) / ((mx * mx + my * my + c1) * (vx + vy + c2))
    maps = s.mean(axis=1).swapaxes(-1, -2)  # channel mean; _blur leaves the maps transposed
    return maps[:, inner].mean(axis=1)


def break_even_horizon(preds: np.ndarray, target: np.ndarray, held: np.ndarray) -> tuple[int, bool]:
    """(the number of leading frames on which ``preds`` has a lower MSE against ``target`` than the
    one frame ``held``, whether it never broke even over the clip: the horizon is then censored at
    the clip's length). A frame on which both are exact is no break-even."""
    preds, target = _frames(preds), _frames(target)
    held = np.asarray(held, dtype=np.float64)
    if preds.shape != target.shape or held.shape != target.shape[1:]:
        raise ValueError(f"shapes differ: preds {preds.shape}, target {target.shape}, held {held.shape}")
    model = np.square(preds - target).mean(axis=(1, 2, 3))
    hold = np.square(held[None] - target).mean(axis=(1, 2, 3))
    no_better = (model >= hold) & ~((model == 0) & (hold == 0))
    if not no_better.any():
        return len(preds), True
    return int(np.argmax(no_better)), False
