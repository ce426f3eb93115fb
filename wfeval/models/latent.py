"""The latent interface: a world model that predicts in its own latent space (docs/latent-models.md).

Declared here once, beside the step interface (wfeval/models/protocol.py). A latent model is any
object with::

    def encode(self, frames) -> z          # N×H×W×3 uint8 frames -> N×D float latents (batched)
    def predict(self, z, actions) -> z     # N×D latents, N×k actions -> N×k×D: one latent per action
    def decode(self, z) -> frames          # optional: N×D -> N×H×W×3 uint8 (keeps every pixel measure)
    def reward(self, z, actions) -> r      # optional: N×D latents, N actions -> N predicted rewards

``predict`` is many steps at once: ``predict(z, actions)[:, j]`` is the latent after the first
``j + 1`` actions (one step is ``k = 1``). It must not change ``z``. ``task=probing`` reads the
simulator's exact state off ``encode`` (observed) and off ``predict`` (imagined ``k`` steps
ahead); ``task=goal_reaching`` plans by the distance of ``predict``'s latents to the encoded goal.
``model=python`` objects and :func:`wfeval.evaluate` provide it by having the methods.

Two optional attributes serve the calibration encoders (wfeval/models/latent_baselines.py) and
are not part of what a user's model needs: ``needs_state = True`` (``encode(frames, states=...)``
gets the exact state; the ceiling ``state_oracle``) and ``imagines_truth = True`` (the predictor
is the true future, encoded: the ``oracle`` predictor).
"""

from __future__ import annotations

from typing import Any

import numpy as np


def has_latent_interface(model: Any) -> bool:
    """True when ``model`` has callable ``encode`` and ``predict``."""
    return callable(getattr(model, "encode", None)) and callable(getattr(model, "predict", None))


def _name(model: Any) -> str:
    return str(getattr(model, "name", "") or type(model).__name__)


def real_values(value: Any, what: str) -> np.ndarray:
    """``value`` as float64, refused (ValueError naming ``what`` and the type) unless it holds real
    numbers: complex values (casting would drop the imaginary part), booleans, objects and strings
    are not latents."""
    array = np.asarray(value)
    if array.dtype.kind == "c":
        raise ValueError(f"{what} returned complex values ({array.dtype}); latents must be real numbers "
                         "(casting would drop the imaginary part: return np.real / np.abs or stack both parts)")
    if array.dtype.kind not in "fiu":
        raise ValueError(f"{what} returned {array.dtype} values; latents must be real numbers (float or int)")
    return array.astype(np.float64, copy=False)


def encode(model: Any, frames: np.ndarray, states: np.ndarray | None = None, discrete: Any = None) -> np.ndarray:
    """``model.encode(frames)`` checked: N×D finite floats, one latent per frame (a ``needs_state``
    calibration encoder gets the exact ``states`` and which columns are ``discrete``)."""
    frames = np.asarray(frames)
    if getattr(model, "needs_state", False):
        z = model.encode(frames, states=states, discrete=discrete)
    else:
        z = model.encode(frames)
    z = real_values(z, f"{_name(model)}.encode")
    if z.ndim != 2 or z.shape[0] != len(frames):
        raise ValueError(f"{_name(model)}.encode returned shape {z.shape} for {len(frames)} frame(s); "
                         f"expected {len(frames)}×D (one latent vector per frame)")
    if not np.isfinite(z).all():
        raise ValueError(f"{_name(model)}.encode returned NaN or infinite values")
    return z


def predict(model: Any, z: np.ndarray, actions: np.ndarray) -> np.ndarray:
    """``model.predict(z, actions)`` checked: N×k×D finite floats (k = actions per row)."""
    z = np.asarray(z, dtype=np.float64)
    actions = np.asarray(actions)
    if actions.ndim == 1:
        actions = actions[:, None]
    given = z.copy()
    out = real_values(model.predict(z, actions), f"{_name(model)}.predict")
    want = (len(z), actions.shape[1], z.shape[1])
    if out.shape != want:
        raise ValueError(f"{_name(model)}.predict returned shape {out.shape}; expected {want[0]}×{want[1]}×{want[2]} "
                         "(one latent per action of each row)")
    if not np.isfinite(out).all():
        raise ValueError(f"{_name(model)}.predict returned NaN or infinite values")
    if not np.array_equal(given, z):
        raise ValueError(f"{_name(model)}.predict changed the latents it was given (it must not mutate z)")
    return out


def decode(model: Any, z: np.ndarray) -> np.ndarray:
    """``model.decode(z)`` checked: N×H×W×3 uint8 frames."""
    frames = np.asarray(model.decode(np.asarray(z, dtype=np.float64)))
    if frames.ndim != 4 or frames.shape[0] != len(z) or frames.shape[-1] != 3 or frames.dtype != np.uint8:
        raise ValueError(f"{_name(model)}.decode returned {frames.dtype} frames of shape {frames.shape} for "
                         f"{len(z)} latent(s); expected {len(z)}×H×W×3 uint8")
    return frames
