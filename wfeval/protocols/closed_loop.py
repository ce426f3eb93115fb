"""``protocol=closed_loop``: a policy (config group ``policy``) sees the model's latest frame and picks
the next action; the model steps by it. The benchmark's simulator replays the chosen actions from
the same start afterwards (:func:`~wfeval.protocols.drivers.replay_references`) to make the
reference, so every reference metric applies."""

from __future__ import annotations

import time
from typing import Any

import numpy as np

from wfeval.config.errors import ConfigError
from wfeval.models.base import initial_frame
from wfeval.models.protocol import Generated
from wfeval.models.stepping import timed_step
from wfeval.protocols.base import Protocol, ProtocolRun
from wfeval.protocols.drivers import Driver, replay_references
from wfeval.protocols.policies import PolicyContext, check_policy, checked_action, policy_space_of


class ClosedLoop(Protocol):
    driver = "closed_loop"
    needs_simulator = True
    uses_policy = True

    def identity(self, run: ProtocolRun) -> dict[str, Any]:
        return {**super().identity(run), "policy": run.policy}

    def drive(self, model: Any, benchmark: Any, store: Any, run: ProtocolRun, policy: Any = None) -> Any:
        if policy is None:
            raise ConfigError("protocol=closed_loop needs a policy: policy=random, scripted, noop or your own "
                              "(policy=user policy._target_=my_pkg.MyPolicy)")
        try:
            check_policy(policy)
        except ValueError as exc:
            raise ConfigError(str(exc)) from exc
        return ClosedLoopDriver(model, policy, benchmark.simulate)


class ClosedLoopDriver(Driver):
    """The policy acts on the model's own frames; :meth:`finalize` replays the chosen actions."""

    protocol = "closed_loop"

    def __init__(self, model: Any, policy: Any, simulate: Any, policy_name: str = ""):
        super().__init__(model)
        self.policy = policy
        self.simulate = simulate  # (request, actions) -> (reference video, metadata updates)
        self.policy_name = policy_name or str(getattr(policy, "name", "") or type(policy).__name__)

    def run_one(self, request: Any) -> Generated:
        space, names = policy_space_of(request)
        horizon = len(request.controls.get("actions") or ())
        seed = int(request.generation.get("seed") or 0)
        frame = initial_frame(request)
        frame.flags.writeable = False  # stored as frame 0: the policy gets a copy of every frame
        started = time.perf_counter()
        state = self.model.start(request)
        rows: list[dict] = [{"step": 0, "call": "start", "actions": [], "frames": 0,
                             "latency_seconds": time.perf_counter() - started}]
        frames, chosen = [frame[None]], []
        for t in range(horizon):
            began = time.perf_counter()
            context = PolicyContext(request, t, tuple(chosen), names, horizon, seed, space)
            action = self.policy.act(frame.copy(), context)  # a copy: nothing it does reaches the stored video
            action = checked_action(action, space, len(names), f"policy {self.policy_name!r}", t)
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

    def finalize(self, pairs, store):
        return replay_references(pairs, store, self.simulate, "closed_loop")
