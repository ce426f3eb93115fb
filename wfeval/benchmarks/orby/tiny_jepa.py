"""``model=tiny_jepa``: the pretrained tiny-jepa 0.1.2 checkpoint (``orby_v1.npz``, shipped in its
wheel) through the latent interface (wfeval/models/latent.py), and its pixels through its decoder.

- ``encode``: 32×32 frames (the first channel / 255) → its encoder → 32-d latents;
- ``predict``: its action-conditioned predictor rolled ``k`` steps (batched over rows);
- ``decode``: its decoder, clipped to [0, 1], as uint8 RGB;
- ``reward``: its reward head (a shaped reward, as it was trained);
- the step interface (``start``/``step``): encode the context frame, then predict and decode one
  frame per action, so every pixel measure runs on its decoded dreams.

The checkpoint's sha256 is pinned: a different file is refused before anything runs.
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from typing import Any, Mapping, Sequence

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.benchmarks.recorded.simulator import require
from wfeval.config.errors import ConfigError
from wfeval.models.base import actions_of, initial_frame
from wfeval.models.protocol import StepOutput

VERSION = "0.1.2"
CHECKPOINT = "orby_v1.npz"
CHECKPOINT_SHA256 = "1b187120e7624fca910ed709f8127b82a8f70bdb0d6403cac6e7dbe6a5c776ab"


def checkpoint_path() -> Path:
    require("tiny_jepa", "tiny-jepa", "model=tiny_jepa")
    import tiny_jepa

    return Path(tiny_jepa.__file__).parent / "checkpoints" / CHECKPOINT


class TinyJepaModel:
    version = "1.0"

    def __init__(self, name: str = "tiny_jepa", batch_size: int | None = None):
        self.name, self.batch_size = name, batch_size
        path = checkpoint_path()
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        if digest != CHECKPOINT_SHA256:
            raise ConfigError(f"model=tiny_jepa: {path} has sha256 {digest}, not the pinned {CHECKPOINT_SHA256} "
                              f"of tiny-jepa=={VERSION}'s {CHECKPOINT}; install tiny-jepa=={VERSION}")
        from tiny_jepa import TinyJEPA

        self.model = TinyJEPA.load(str(path))
        self.n_actions = int(self.model.n_actions)

    def fingerprint(self) -> dict[str, Any]:
        return {"checkpoint": CHECKPOINT, "sha256": CHECKPOINT_SHA256, "tiny_jepa": VERSION}

    @staticmethod
    def cannot_serve(request: GenerationRequest) -> str | None:
        info = request.metadata.get("simulator")
        family = info.get("family") if isinstance(info, Mapping) else None
        return None if family == "orby" else "tiny-jepa was trained on OrbyWorld: it serves benchmark=orby only"

    # -- the latent interface ------------------------------------------------------------------

    def encode(self, frames: Any) -> np.ndarray:
        frames = np.asarray(frames)
        if frames.ndim != 4 or frames.shape[1:3] != (32, 32):
            raise ValueError(f"tiny_jepa encodes N×32×32×C frames, got shape {frames.shape}")
        return self.model.encode_batch(frames[..., 0].astype(np.float32) / 255.0).astype(np.float64)

    def predict(self, z: Any, actions: Any) -> np.ndarray:
        z = np.asarray(z, dtype=np.float32)
        actions = np.asarray(actions, dtype=np.int64).reshape(len(z), -1)
        eye = np.eye(self.n_actions, dtype=np.float32)
        out, current = [], z
        for j in range(actions.shape[1]):
            current = self.model.nets["pred"].forward(np.concatenate([current, eye[actions[:, j]]], axis=1))
            out.append(current)
        return np.stack(out, axis=1).astype(np.float64)

    def decode(self, z: Any) -> np.ndarray:
        from tiny_jepa import from_patches

        flat = self.model.nets["dec"].forward(np.asarray(z, dtype=np.float32))
        gray = np.clip(from_patches(flat), 0.0, 1.0)
        return np.repeat(np.rint(gray * 255.0).astype(np.uint8)[..., None], 3, axis=-1)

    def reward(self, z: Any, actions: Any) -> np.ndarray:
        z = np.asarray(z, dtype=np.float32)
        onehot = np.eye(self.n_actions, dtype=np.float32)[np.asarray(actions, dtype=np.int64).reshape(-1)]
        return self.model.nets["reward"].forward(np.concatenate([z, onehot], axis=1))[:, 0].astype(np.float64)

    # -- the step interface: decoded dreams for every pixel measure ---------------------------------

    def start(self, request: GenerationRequest) -> np.ndarray:
        return self.encode(initial_frame(request)[None])[0]

    def step(self, state: Any, actions: Sequence[Any]) -> StepOutput:
        future = self.predict(np.asarray(state)[None], np.asarray([int(a) for a in actions])[None])[0]
        return StepOutput(state=future[-1], frames=self.decode(future))

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Any]:
        out: list[Any] = []
        for request in requests:
            future = self.predict(self.start(request)[None], np.asarray(actions_of(request))[None])[0]
            out.append({"generated_video": np.concatenate([initial_frame(request)[None], self.decode(future)])})
        return out
