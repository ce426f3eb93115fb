"""torch-world's latent world models (``torch_world.models.WorldModel``: LeWM, DINO-WM, ...) as a
wfeval latent model (docs/peer-models.md).

torch-world's ``WorldModel`` encodes ``(B, T, C, H, W)`` float pixels to ``(B, T, ...)`` latents and
rolls a latent forward with ``rollout(z, actions)`` (``T`` actions -> ``T + 1`` latents). Here one
frame is one sequence of length 1: ``encode`` gives each frame's latent flattened to a vector,
``predict`` unflattens it, rolls it through the ``k`` actions and returns the ``k`` imagined
latents. Discrete actions are one-hot over the model's action width (read off its action encoder
unless ``action_dim`` is given); the model runs in eval mode without gradients.
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from wfeval.models.peers import _tensors


class TorchWorldLatent:
    """``model``: a built torch-world ``WorldModel`` (weights loaded by you). ``image_size``: the side
    the model's encoder reads (frames are resized to it; None: as they come); ``mean``/``std``: the
    per-channel normalisation it was trained with (None: pixels in [0, 1]); ``action_dim``: the width
    of one action (None: the first Linear layer of ``model.action_encoder``)."""

    def __init__(self, model: Any, image_size: int | None = None, mean: Sequence[float] | None = None,
                 std: Sequence[float] | None = None, action_dim: int | None = None, name: str | None = None,
                 version: str | None = None):
        self.model = model.eval()
        self.image_size, self.mean, self.std = image_size, mean, std
        self.action_dim = action_dim or _tensors.linear_in_features(getattr(model, "action_encoder", None))
        if self.action_dim is None:
            raise ValueError(f"{type(model).__name__} has no action_encoder with a Linear layer: give action_dim")
        self.name = name or f"torch_world_{type(model).__name__.lower()}"
        self.version = version or "0"
        self._shape: tuple[int, ...] | None = None  # one frame's latent shape, before flattening
        self.device = "cpu"

    def setup(self, device: str = "cpu") -> None:
        self.device = device
        self.model.to(device)

    def encode(self, frames: Any) -> np.ndarray:
        import torch

        x = _tensors.frames_tensor(frames, self.device, self.image_size, self.mean, self.std)
        with torch.no_grad():
            z = self.model.encode(x.unsqueeze(1))[:, 0]  # (N, 1, ...) -> one latent per frame
        self._shape = tuple(z.shape[1:])
        return _tensors.as_latents(z)

    def predict(self, z: Any, actions: Any) -> np.ndarray:
        import torch

        if self._shape is None:
            raise RuntimeError("predict before encode: the latent shape is read off the first encode")
        z = np.asarray(z)
        latent = torch.as_tensor(z, dtype=torch.float32, device=self.device).reshape(len(z), 1, *self._shape)
        acts = _tensors.actions_tensor(actions, self.action_dim, self.device)
        with torch.no_grad():
            rolled = self.model.rollout(latent, acts)[:, 1:]  # (N, k + 1, ...): drop the given latent
        return _tensors.as_latents(rolled.flatten(0, 1)).reshape(len(z), acts.shape[1], -1)
