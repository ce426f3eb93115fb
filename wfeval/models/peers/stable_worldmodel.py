"""stable-worldmodel's latent world models (``stable_worldmodel.wm``: ``LeWM``, ``PLDM``) as a wfeval
latent model (docs/peer-models.md).

Both share one surface: ``encode(info)`` reads ``info["pixels"]`` ``(B, T, C, H, W)`` and writes
``info["emb"]`` ``(B, T, D)`` (the encoder's CLS token, projected); ``action_encoder(actions)`` embeds
``(B, T, action_dim)`` actions; ``predict(emb, act_emb)`` predicts the next embedding at every
position. Their ``rollout`` re-encodes pixels (and plans over sample dimensions); here the same
autoregressive loop runs from the latents wfeval hands back: each step predicts from the last
``history`` latents (the predictor's ``num_frames``) and the actions taken at them. Discrete
actions are one-hot over the width of the action encoder's first layer unless ``action_dim`` is
given. stable-worldmodel's DINO-WM (``PreJEPA``) is not adapted: its latent carries the action
taken at the frame, so a frame alone has none (torch-world's ``DINOWM`` serves DINO-WM).
"""

from __future__ import annotations

from typing import Any, Sequence

import numpy as np

from wfeval.models.peers import _tensors


class StableWorldModelLatent:
    """``model``: a built ``LeWM`` or ``PLDM`` (weights loaded by you, e.g. ``stable_worldmodel.wm.utils.
    load_pretrained``). ``image_size``, ``mean``, ``std``: what its encoder reads (resize, per-channel
    normalisation; None: as they come, in [0, 1]); ``history``: the latents each prediction sees (None:
    ``model.predictor.num_frames``, else 3 as in the library's rollout)."""

    def __init__(self, model: Any, image_size: int | None = None, mean: Sequence[float] | None = None,
                 std: Sequence[float] | None = None, action_dim: int | None = None, history: int | None = None,
                 name: str | None = None, version: str | None = None):
        self.model = model.eval()
        self.image_size, self.mean, self.std = image_size, mean, std
        self.action_dim = action_dim or _tensors.linear_in_features(getattr(model, "action_encoder", None))
        if self.action_dim is None:
            raise ValueError(f"{type(model).__name__} has no action_encoder with a Linear layer: give action_dim")
        self.history = int(history or getattr(getattr(model, "predictor", None), "num_frames", 3))
        self.name = name or f"stable_worldmodel_{type(model).__name__.lower()}"
        self.version = version or "0"
        self.device = "cpu"

    def setup(self, device: str = "cpu") -> None:
        self.device = device
        self.model.to(device)

    def encode(self, frames: Any) -> np.ndarray:
        import torch

        pixels = _tensors.frames_tensor(frames, self.device, self.image_size, self.mean, self.std)
        with torch.no_grad():
            emb = self.model.encode({"pixels": pixels.unsqueeze(1)})["emb"][:, 0]
        return _tensors.as_latents(emb)

    def predict(self, z: Any, actions: Any) -> np.ndarray:
        import torch

        z = np.asarray(z)
        emb = torch.as_tensor(z, dtype=torch.float32, device=self.device)[:, None]  # (N, 1, D)
        acts = _tensors.actions_tensor(actions, self.action_dim, self.device)  # (N, k, action_dim)
        with torch.no_grad():
            act_emb = self.model.action_encoder(acts)
            for t in range(acts.shape[1]):
                lo = max(0, t + 1 - self.history)
                nxt = self.model.predict(emb[:, lo:t + 1], act_emb[:, lo:t + 1])[:, -1:]
                emb = torch.cat([emb, nxt], dim=1)
        return _tensors.as_latents(emb[:, 1:].flatten(0, 1)).reshape(len(z), acts.shape[1], -1)
