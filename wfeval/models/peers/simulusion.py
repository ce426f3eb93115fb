"""simulusion's world models (its ``simulusion.world_model.WorldModel`` protocol: Dreamer, PlaNet, IRIS,
DIAMOND, Genie, World Models) as wfeval models (docs/peer-models.md).

simulusion gives every family one surface: ``encode(frames)`` -> a state (a dict of tensors, batch
first), ``step(state, action)`` -> a ``Transition`` (the next state, the model's reward and episode
end), ``decode(state)`` -> the current frame, float ``(B, C, H, W)`` in [0, 1]. Every family decodes,
so :class:`SimulusionSteps` serves wfeval's **step interface** (open loop, autoregressive, closed
loop, planning in pixels, policy evaluation with the model's own reward). :class:`SimulusionLatent`
adds the **latent interface** for a family whose state keeps its shape as it steps (Dreamer's RSSM
state, PlaNet's, DIAMOND's frame window): the state's tensors flattened into one vector and back.
IRIS's state is its growing token history: it has no fixed-width latent and runs as steps only.

A frame shorter than the family's context (DIAMOND conditions on ``L`` frames) is repeated ``L``
times. Discrete wfeval actions go to a discrete family as they are and to a continuous one (Dreamer)
as one-hot vectors; vectors go as they are. simulusion samples from torch's global random state:
each call here runs inside ``torch.random.fork_rng`` seeded from the request's seed (or ``seed``),
so a run repeats and the caller's random state is left as it was.
"""

from __future__ import annotations

import contextlib
import hashlib
from dataclasses import dataclass
from typing import Any, Iterator, Sequence

import numpy as np

from wfeval.models.base import initial_frame
from wfeval.models.peers import _tensors
from wfeval.models.protocol import StepOutput


@dataclass(frozen=True)
class SimState:
    """One sample's simulusion state, the steps taken and its seed (never mutated: a planner branches it)."""

    state: Any
    t: int
    seed: int
    size: tuple[int, int]  # the context frame's H×W: decoded frames come back at this size


def _seed(*parts: Any) -> int:
    return int.from_bytes(hashlib.sha256("/".join(map(str, parts)).encode()).digest()[:4], "little")


class SimulusionSteps:
    """``model``: a simulusion ``WorldModel`` (``load_world_model(path)``), or a trained agent that
    ``simulusion.world_model.as_world_model`` wraps (a ``Dreamer``, an ``IRISAgent``, ...)."""

    def __init__(self, model: Any, seed: int = 0, name: str | None = None, version: str | None = None):
        if not all(callable(getattr(model, m, None)) for m in ("encode", "step", "decode")) or \
                not hasattr(model, "spec"):
            from simulusion.world_model import as_world_model

            model = as_world_model(model)
        self.world = model
        self.seed = int(seed)
        self.name = name or f"simulusion_{model.spec.family}"
        self.version = version or "0"

    @property
    def spec(self) -> Any:
        return self.world.spec

    @contextlib.contextmanager
    def _random(self, seed: int) -> Iterator[None]:
        import torch

        device = getattr(self.world, "device", None)
        cuda = [device] if getattr(device, "type", str(device)).startswith("cuda") else []
        with torch.random.fork_rng(devices=cuda):
            torch.manual_seed(seed)
            yield

    def _context(self, frames: np.ndarray) -> np.ndarray:
        """N×H×W×3 frames as N×L×H×W×3, each frame repeated to the family's context length."""
        frames = np.asarray(frames)
        return np.repeat(frames[:, None], max(1, int(self.spec.context_frames)), axis=1)

    def _action(self, actions: Any) -> Any:
        """One action per row of a batch, in the family's encoding (see the module doc)."""
        spec = self.spec.action
        array = np.asarray(actions)
        if spec.kind == "discrete":
            if array.dtype.kind not in "iub":
                raise ValueError(f"{self.name} takes discrete actions (0..{spec.n - 1}); got {array.dtype} values")
            return array.astype(np.int64)
        if array.ndim == 1 and array.dtype.kind in "iub":
            return _tensors.actions_tensor(array[:, None], spec.n)[:, 0].numpy()
        return array.astype(np.float32).reshape(len(array), spec.n)

    def _frames(self, state: Any, size: tuple[int, int]) -> np.ndarray:
        import torch.nn.functional as F

        image = self.world.decode(state)
        if tuple(image.shape[-2:]) != tuple(size):
            image = F.interpolate(image, size=size, mode="bilinear", align_corners=False)
        return (image.clamp(0, 1) * 255).round().byte().permute(0, 2, 3, 1).cpu().numpy()

    # -- the step interface -------------------------------------------------------------------

    def start(self, request: Any) -> SimState:
        frame = initial_frame(request)
        seed = int(request.generation.get("seed", self.seed))
        with self._random(_seed(seed, "start")):
            state = self.world.encode(self._context(frame[None]))
        return SimState(state, 0, seed, tuple(frame.shape[:2]))

    def step(self, state: SimState, actions: Sequence[Any]) -> StepOutput:
        current, frames, rewards, dones = state.state, [], [], []
        for i, action in enumerate(actions):
            with self._random(_seed(state.seed, state.t + i)):
                out = self.world.step(current, self._action(np.asarray([action])))
            current = out.state
            frames.append(self._frames(current, state.size)[0])
            rewards.append(None if out.reward is None else float(out.reward.reshape(-1)[0]))
            dones.append(False if out.terminated is None else bool(out.terminated.reshape(-1)[0]))
        after = SimState(current, state.t + len(actions), state.seed, state.size)
        if any(r is None for r in rewards):
            return StepOutput(after, np.stack(frames))
        return StepOutput(after, np.stack(frames), reward=rewards, done=dones)


class SimulusionLatent(SimulusionSteps):
    """:class:`SimulusionSteps` plus the latent interface: ``encode`` flattens the state of each frame
    (its tensors in key order) into one vector, ``predict`` rebuilds the state, steps it and flattens
    each step's state; ``reward`` is the family's reward head."""

    _layout: tuple[tuple[str, tuple[int, ...], Any], ...] | None = None

    def _flatten(self, state: Any) -> np.ndarray:
        layout = tuple((k, tuple(v.shape[1:]), v.dtype) for k, v in sorted(state.items()))
        if self._layout is not None and layout != self._layout:
            raise ValueError(f"{self.name}: the {self.spec.family} state changes shape as it steps ({self._layout} -> "
                             f"{layout}): it has no fixed-width latent; evaluate it with SimulusionSteps")
        self._layout = layout
        return np.concatenate([_tensors.as_latents(v) for _, v in sorted(state.items())], axis=1)

    def _state(self, z: np.ndarray) -> dict[str, Any]:
        import torch

        if self._layout is None:
            raise RuntimeError("predict before encode: the state layout is read off the first encode")
        out, at = {}, 0
        for key, shape, dtype in self._layout:
            width = int(np.prod(shape, dtype=np.int64))
            part = torch.as_tensor(z[:, at:at + width], device=self.world.device).reshape(len(z), *shape)
            out[key] = part.round().to(dtype) if not dtype.is_floating_point else part.to(dtype)
            at += width
        return out

    def encode(self, frames: Any) -> np.ndarray:
        with self._random(_seed(self.seed, "encode")):
            return self._flatten(self.world.encode(self._context(frames)))

    def _rollout(self, z: Any, actions: Any) -> tuple[np.ndarray, list[Any]]:
        z, actions = np.asarray(z), np.asarray(actions)
        state, latents, rewards = self._state(z), [], []
        for j in range(actions.shape[1]):
            with self._random(_seed(self.seed, "predict", j)):
                out = self.world.step(state, self._action(actions[:, j]))
            state = out.state
            latents.append(self._flatten(state))
            rewards.append(out.reward)
        return np.stack(latents, axis=1), rewards

    def predict(self, z: Any, actions: Any) -> np.ndarray:
        return self._rollout(z, actions)[0]

    def reward(self, z: Any, actions: Any) -> np.ndarray:
        """The reward head's prediction for taking ``actions`` (one per row) in the states ``z``."""
        rewards = self._rollout(z, np.asarray(actions).reshape(len(z), 1, *np.shape(actions)[1:]))[1]
        if rewards[0] is None:
            raise ValueError(f"{self.name}: the {self.spec.family} model has no reward head")
        return rewards[0].reshape(-1).double().cpu().numpy()
