"""``model=learned``: serve a recipe checkpoint through ``generate`` and the step interface.

    python -m wfeval model=learned                           # outputs/recipes/<benchmark>/model.pt
    python -m wfeval model=learned model.checkpoint=path/to/model.pt

``start(request)`` holds the last two context frames (the request's ``context`` when it has
one, else its ``image`` twice); ``step(state, actions)`` rolls the network forward one frame per
action, each prediction rounded to uint8 and fed back, and returns a new state (states are
immutable, so a planner can branch several futures from one); ``step_many`` steps many states in
one batched forward pass per action; ``generate`` is ``start`` + ``step_many`` over a batch of
requests. The model is deterministic: for one request, ``[image] + step(start(r), actions).frames``
equals ``generate([r])`` (batches of different sizes may differ by a rounding level where the
backend's float sums differ).

The identity the generation cache keys on includes the sha256 of the weights file, the network
config, and this recipe's network code, so a retrained model is never served stale frames (and
the same weights, trained again byte for byte, are served from the cache).
"""

from __future__ import annotations

import hashlib
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Sequence

import numpy as np

from wfeval.api import ActionSpace, GenerationRequest, action_space_of, has_continuous_actions
from wfeval.models.base import initial_frame
from wfeval.models.protocol import Generated, StepOutput
from wfeval.recipes import checkpoint as ckpt
from wfeval.storage.artifacts import read_array


@dataclass(frozen=True)
class LearnedState:
    """The model's state: the last two frames (read-only uint8 H×W×3) and how it got there."""

    sample_id: str
    previous: np.ndarray
    current: np.ndarray
    steps: int = 0
    seed: int | None = None


def _frozen(frame: np.ndarray) -> np.ndarray:
    frame = np.array(frame, dtype=np.uint8, copy=True)
    frame.flags.writeable = False
    return frame


def _space(config: Any, meta: dict[str, Any]) -> ActionSpace:
    """The continuous action space a checkpoint was trained on: the declared one its sidecar keeps, as
    one flat vector (else its network config's bounds)."""
    if meta.get("action_space"):
        space = ActionSpace.from_dict(meta["action_space"])
        return ActionSpace.continuous((space.size,), low=space.low or None, high=space.high or None,
                                      dtype=space.dtype, names=space.names if len(space.shape) == 1 else ())
    return ActionSpace.continuous((config.n_actions,), low=config.action_low, high=config.action_high)


def _source_sha256() -> str:
    digest = hashlib.sha256()
    here = Path(__file__).parent
    for name in ("net.py", "learned.py"):
        digest.update((here / name).read_bytes())
    return digest.hexdigest()


class LearnedModel:
    name = "learned"
    #: options whose files fingerprint() already identifies (not hashed again: wfeval/models/_files.py)
    fingerprinted_options = ("checkpoint",)  # by the weights' sha256 (fingerprint): not the sidecar's timings
    version = "1.0"

    def __init__(self, checkpoint: str, name: str = "learned", device: str = "auto", batch_size: int | None = None):
        self.checkpoint = str(checkpoint)
        self.name = name or self.name
        self.device_request = device
        self.batch_size = batch_size
        self.device: str | None = None
        self._net: Any = None
        self.meta: dict[str, Any] = {}

    # -- identity and lifecycle ----------------------------------------------------------------

    def fingerprint(self) -> dict[str, Any]:
        """The weights' sha256, the network config and action names the sidecar gives them, the training
        data's hash and this recipe's code: not the sidecar's timings (the same weights trained twice
        are the same model)."""
        weights, meta = ckpt.read_meta(self.checkpoint)
        return {"weights_sha256": ckpt.file_sha256(weights), "net": meta.get("net"),
                "action_names": meta.get("action_names"), "data_sha256": meta.get("data", {}).get("sha256"),
                "source_sha256": _source_sha256()}

    def setup(self) -> None:
        from wfeval.models.python import resolve_device

        self.device = resolve_device(self.device_request)
        self._net, self.meta, _ = ckpt.load(self.checkpoint, self.device)

    def close(self) -> None:
        self._net = None

    def _ready(self) -> Any:
        if self._net is None:
            self.setup()
        return self._net

    # -- the step interface --------------------------------------------------------------------

    def start(self, request: GenerationRequest) -> LearnedState:
        net = self._ready()
        self._check_space(request, net.config)
        names = request.controls.get("action_names")
        trained = self.meta.get("action_names")
        if names is not None and trained is not None and list(names) != list(trained):
            raise ValueError(f"sample {request.sample_id!r}: the checkpoint was trained on actions {trained}, the "
                             f"request's actions are {list(names)}; train on this benchmark "
                             f"(python -m wfeval.recipes.train benchmark={request.benchmark_id.split('@')[0]})")
        if "context" in request.inputs:
            context = read_array(request.inputs["context"])
            previous, current = context[-2] if len(context) > 1 else context[-1], context[-1]
        else:
            previous = current = initial_frame(request)
        size = (net.config.height, net.config.width, 3)
        if current.shape != size:
            raise ValueError(f"sample {request.sample_id!r}: frames are {current.shape[0]}x{current.shape[1]}, the "
                             f"checkpoint predicts {size[0]}x{size[1]} frames")
        return LearnedState(request.sample_id, _frozen(previous), _frozen(current), 0, request.generation.get("seed"))

    def _check_space(self, request: GenerationRequest, config: Any) -> None:
        """The request's actions are of the kind, shape and bounds the checkpoint was trained on."""
        where = f"sample {request.sample_id!r}"
        name = request.benchmark_id.split("@")[0]
        hint = f"train on this benchmark (python -m wfeval.recipes.train benchmark={name})"
        continuous = config.action_kind == "continuous"
        trained = _space(config, self.meta) if continuous else None
        if has_continuous_actions(request) != continuous:
            if continuous:
                raise ValueError(f"{where}: the checkpoint reads continuous actions ({trained.describe()}); this "
                                 f"benchmark's actions are discrete ids; {hint}")
            raise ValueError(f"{where}: the checkpoint embeds discrete action ids; this benchmark's actions are "
                             f"continuous vectors (controls['action_space']); {hint}")
        space = action_space_of(request) if continuous else None
        if space is not None and (space.size != trained.size or (space.bounded and space.bounds() != trained.bounds())):
            raise ValueError(f"{where}: the checkpoint was trained on actions {trained.describe()}, the request's "
                             f"are {space.describe()}; {hint}")

    def _action_table(self, states: Sequence[LearnedState], actions: Sequence[Sequence[Any]], config: Any) -> Any:
        """The chunks as one padded array (states × longest chunk [× elements]), every action checked."""
        if config.action_kind == "continuous":
            space, n = _space(config, self.meta), config.n_actions
            chunks = []
            for state, chunk in zip(states, actions):
                why = space.problem([np.reshape(np.asarray(a), -1) if np.ndim(a) else a for a in chunk])
                if why:
                    raise ValueError(f"sample {state.sample_id!r}: {why}")
                chunks.append(np.asarray(chunk, np.float32).reshape(len(chunk), n))
            table = np.zeros((len(chunks), max(len(c) for c in chunks), n), np.float32)
        else:
            n_actions, chunks = config.n_actions, []
            for state, chunk in zip(states, actions):
                for i, a in enumerate(chunk):
                    is_id = isinstance(a, (int, np.integer)) and not isinstance(a, (bool, np.bool_))
                    if not is_id or not 0 <= a < n_actions:
                        raise ValueError(f"sample {state.sample_id!r}: actions[{i}]={a!r} is not an action id in "
                                         f"[0, {n_actions - 1}]")
                chunks.append(np.asarray(chunk, np.int64))
            table = np.zeros((len(chunks), max(len(c) for c in chunks)), np.int64)
        for i, chunk in enumerate(chunks):
            table[i, :len(chunk)] = chunk
        return table, [len(c) for c in chunks]

    def step(self, state: LearnedState, actions: Sequence[Any]) -> StepOutput:
        return self.step_many([state], [actions])[0]

    def step_many(self, states: Sequence[LearnedState], actions: Sequence[Sequence[Any]]) -> list[StepOutput]:
        import torch

        from wfeval.recipes.net import to_frames, to_input

        net = self._ready()
        if len(states) != len(actions):
            raise ValueError(f"step_many: {len(states)} states but {len(actions)} action chunks")
        if not states:
            return []
        table, lengths = self._action_table(states, actions, net.config)
        longest = max(lengths, default=0)
        h, w = net.config.height, net.config.width
        frames = [np.empty((n, h, w, 3), np.uint8) for n in lengths]
        if longest:
            with torch.inference_mode():
                previous = torch.from_numpy(np.stack([s.previous for s in states])).to(self.device)
                current = torch.from_numpy(np.stack([s.current for s in states])).to(self.device)
                table = torch.from_numpy(table).to(self.device)
                for k in range(longest):
                    active = [i for i, n in enumerate(lengths) if k < n]
                    idx = torch.tensor(active, device=self.device) if len(active) < len(states) else slice(None)
                    nxt = to_frames(net(to_input(previous[idx]), to_input(current[idx]), table[idx, k]))
                    previous[idx] = current[idx].clone()
                    current[idx] = nxt
                    host = nxt.cpu().numpy()
                    for j, i in enumerate(active):
                        frames[i][k] = host[j]
        out = []
        for state, n, f in zip(states, lengths, frames):
            if n == 0:
                out.append(StepOutput(state=state, frames=f))
                continue
            prev = f[-2] if n > 1 else state.current
            new = LearnedState(state.sample_id, _frozen(prev), _frozen(f[-1]), state.steps + n, state.seed)
            out.append(StepOutput(state=new, frames=f))
        return out

    # -- open loop ----------------------------------------------------------------------------

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Any]:
        self._ready()
        outcomes: list[Any] = [None] * len(requests)
        started, states, chunks = [], [], []
        for i, request in enumerate(requests):
            try:
                states.append(self.start(request))
                chunks.append(list(request.controls.get("actions", ())))
                started.append(i)
            except ValueError as exc:  # this sample cannot be served: a per-sample failure
                outcomes[i] = exc
        if started:
            t0 = time.perf_counter()
            stepped = self.step_many(states, chunks)
            if self.device and self.device.startswith("cuda"):
                import torch

                torch.cuda.synchronize()
            seconds = time.perf_counter() - t0
            longest = max(len(c) for c in chunks) or 1
            meta = {"device": self.device, "batch": len(started),
                    "step_latency_ms": round(1000 * seconds / longest, 3)}
            for i, state, out in zip(started, states, stepped):
                video = np.concatenate([state.current[None], out.frames])
                outcomes[i] = Generated({"generated_video": video}, meta)
        return outcomes
