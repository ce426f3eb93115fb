"""Protocol drivers: a model wrapped so that ``generate(requests)`` runs one protocol per request.

The pipeline's generation path (cache, retries, time limits, output checks) is unchanged: it
calls the driver's ``generate`` as it would call a model's. Each outcome is a
:class:`~wfeval.models.protocol.Generated` whose ``metadata["steps"]`` holds one row per model
call (the pipeline writes them to ``steps.jsonl``). ``finalize(pairs, store)`` runs after
generation (for cached results too): the closed-loop and planning drivers replace each
request's actions and reference video by the chosen actions replayed in the benchmark's own
simulator, so every reference metric scores the rollout against the true world.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Mapping, Sequence

import numpy as np

from wfeval.api import GenerationRequest, GenerationResult
from wfeval.models.base import initial_frame
from wfeval.models.protocol import Generated
from wfeval.protocols.policies import PolicyContext, policy_space_of
from wfeval.models.stepping import ModelWrapper, per_sample, rollout, timed_step


class Driver(ModelWrapper):
    """Base: delegates identity, setup and close to the wrapped model."""

    protocol = ""

    def fingerprint(self) -> dict[str, Any]:
        method = getattr(self.model, "fingerprint", None)
        return dict(method() or {}) if callable(method) else {}

    def generate(self, requests: Sequence[GenerationRequest]) -> list[Any]:
        return per_sample(self.run_one, requests)

    def run_one(self, request: GenerationRequest) -> Any:
        raise NotImplementedError

    def finalize(self, pairs: list[tuple[GenerationRequest, GenerationResult]], store: Any) -> list:
        return pairs


class AutoregressiveDriver(Driver):
    """``protocol=autoregressive``: start, then ``step`` through the request's actions,
    ``chunk`` actions per call; the video is [initial frame] + every frame produced."""

    protocol = "autoregressive"

    def __init__(self, model: Any, chunk: int = 1):
        super().__init__(model)
        if chunk < 1:
            raise ValueError(f"protocol.chunk must be >= 1, got {chunk}")
        self.chunk = int(chunk)

    def run_one(self, request: GenerationRequest) -> Generated:
        video, rows = rollout(self.model, request, self.chunk)
        return Generated({"generated_video": video}, {"steps": rows, "protocol": self.protocol, "chunk": self.chunk})


class ClosedLoopDriver(Driver):
    """``protocol=closed_loop``: at each step the policy sees the model's latest frame and picks
    the next action; the model steps by it. The chosen actions are replayed in the benchmark's
    simulator afterwards (:meth:`finalize`) to give the reference."""

    protocol = "closed_loop"

    def __init__(self, model: Any, policy: Any, simulate: Any, policy_name: str = ""):
        super().__init__(model)
        self.policy = policy
        self.simulate = simulate  # (request, actions) -> (reference video, metadata updates)
        self.policy_name = policy_name or str(getattr(policy, "name", "") or type(policy).__name__)

    def run_one(self, request: GenerationRequest) -> Generated:
        space, names = policy_space_of(request)
        horizon = len(request.controls.get("actions") or ())
        seed = int(request.generation.get("seed") or 0)
        frame = initial_frame(request)
        started = time.perf_counter()
        state = self.model.start(request)
        rows: list[dict] = [{"step": 0, "call": "start", "actions": [], "frames": 0,
                             "latency_seconds": time.perf_counter() - started}]
        frames, chosen = [frame[None]], []
        for t in range(horizon):
            began = time.perf_counter()
            action = self.policy.act(frame, PolicyContext(request, t, tuple(chosen), names, horizon, seed, space))
            action = self._checked(action, space, t)
            policy_seconds = time.perf_counter() - began
            state, out, seconds = timed_step(self.model, state, [action])
            frame = out[-1]
            frames.append(out)
            chosen.append(action.tolist() if isinstance(action, np.ndarray) else action)
            rows.append({"step": t + 1, "call": "step", "actions": [chosen[-1]], "frames": 1,
                         "latency_seconds": seconds, "policy_seconds": policy_seconds})
        return Generated({"generated_video": np.concatenate(frames)},
                         {"steps": rows, "protocol": self.protocol,
                          "closed_loop": {"actions": chosen, "policy": self.policy_name}})

    def _checked(self, action: Any, space: Any, step: int) -> Any:
        """The policy's action as the model gets it: a discrete id as an int; a continuous action as a
        read-only array of the space's shape and dtype, after checking it belongs to the space (a wrong
        shape, NaN or a value out of bounds is this sample's failure, naming the policy and the step)."""
        if space is None:
            return int(action) if isinstance(action, (int, np.integer)) else action
        from wfeval.models.base import continuous_actions

        return continuous_actions([action], space, f"policy {self.policy_name!r} at step {step}")[0]

    def finalize(self, pairs, store):
        return replay_references(pairs, store, self.simulate, "closed_loop")


def replay_references(pairs: list[tuple[GenerationRequest, GenerationResult]], store: Any, simulate: Any,
                      key: str) -> list[tuple[GenerationRequest, GenerationResult]]:
    """Each generated sample's request with its actions replaced by the ones the rollout chose
    (``result.metadata[key]["actions"]``; the benchmark's script kept as ``scripted_actions``) and
    its reference video by those actions simulated from the sample's start."""
    out = []
    for request, result in pairs:
        info = result.metadata.get(key) if result.status == "ok" else None
        if not isinstance(info, Mapping) or "actions" not in info:
            out.append((request, result))
            continue
        actions = list(info["actions"])
        video, metadata = simulate(request, actions)
        controls = {**request.controls, "actions": actions,
                    "scripted_actions": list(request.controls.get("scripted_actions",
                                                                  request.controls.get("actions") or ()))}
        request = dataclasses.replace(
            request, controls=controls, references={**request.references, "video": store.put_array(video, kind="video")},
            metadata={**request.metadata, **dict(metadata), key: {"replayed_by": "benchmark simulator",
                                                                   "actions": len(actions)}})
        out.append((request, dataclasses.replace(result, steps=len(actions))))  # actions actually taken
    return out
