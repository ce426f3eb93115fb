"""``protocol=behavioural_fidelity`` (``task=behavioural_fidelity`` selects it): a frozen policy whose
perception is replaced by the world model.

From each sample's start, the family's scripted policy (``protocol.policy``; null: its first, the best)
acts on the frames the **model** predicts, while its actions run in the benchmark's **true simulator**:
the model is stepped with the same actions (it imagines what the policy did; it is never re-grounded
on a real frame), and the simulator's reward makes the return. :meth:`BehaviouralFidelityDriver.finalize`
runs the same policy on the real frames from the same start: the return it earns when it sees the
world. Behavioural fidelity is the first return as a fraction of the second (WorldModelGym).

The reward-prediction measures get their record here too: the model is stepped along the actions of
the real-perception episode (the same actions for every model), and the episode's reward its frames
imply, read off them by the family (``fidelity_reward``, the gridworld's: the agent on the goal cell),
is recorded beside the simulator's; a family without the reader records none.

Outputs: ``generated_video``, the frames the policy saw; ``result.metadata["behavioural_fidelity"]``
(return, steps, actions) and ``["reward_prediction"]`` (true and predicted rewards per step, discount).
The finalized request's ``metadata["behavioural_fidelity"]["real"]`` holds the real-perception episode;
its actions and reference video are the executed actions replayed (when the family can replay them),
so the reference metrics score what the policy saw against what happened.
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Mapping

import numpy as np

from wfeval.config.errors import ConfigError
from wfeval.models.base import initial_frame, plain_actions
from wfeval.models.protocol import Generated, check_step_output
from wfeval.protocols.base import Protocol, ProtocolRun
from wfeval.protocols.drivers import Driver
from wfeval.protocols.policies import PolicyContext, checked_action, policy_identity, policy_space_of
from wfeval.tasks import behavioural_fidelity


class BehaviouralFidelity(Protocol):
    driver = "behavioural_fidelity"
    task_kinds = ("behavioural_fidelity",)
    family_need = behavioural_fidelity.NEED

    def __init__(self, policy: str | None = None):
        self.policy = None if policy is None else str(policy)

    def identity(self, run: ProtocolRun) -> dict[str, Any]:
        return {**super().identity(run), "policy": self.policy, "task_data": run.task.to_dict()["data"]}

    def drive(self, model: Any, benchmark: Any, store: Any, run: ProtocolRun, policy: Any = None) -> Any:
        scripted = dict(benchmark.fidelity_policies())
        name = self.policy or next(iter(scripted), None)
        if name not in scripted:
            raise ConfigError(f"protocol.policy: {name!r} is not one of the benchmark's policies ({', '.join(scripted)})")
        return BehaviouralFidelityDriver(model, name, scripted[name], benchmark)


def predicted_rewards(model: Any, bench: Any, request: Any, actions: list, who: str) -> dict[str, Any]:
    """The episode's reward the model implies for each of ``actions`` stepped from the sample's start, read
    off its frames by the family (``fidelity_reward``): ``{"predicted": [...], "source": "frames"}``;
    ``predicted`` None when the family reads none (a model's own reward is its game's, not the episode's
    goal reward: the recorded games score it under ``task=reward_prediction``)."""
    reader = getattr(bench, "fidelity_reward", None)
    if not callable(reader):
        return {"predicted": None, "source": None}
    state, seen, predicted = model.start(request), initial_frame(request), []
    for action in actions:
        out = model.step(state, [action])
        previous, state, seen = seen, out.state, check_step_output(out, 1, who)[-1]
        predicted.append(float(reader(request, previous, seen)[0]))
    return {"predicted": predicted, "source": "frames"}


class BehaviouralFidelityDriver(Driver):
    protocol = "behavioural_fidelity"

    def __init__(self, model: Any, policy_name: str, policy: Any, benchmark: Any):
        super().__init__(model)
        self.policy_name, self.policy, self.bench = policy_name, policy, benchmark

    def choices(self) -> dict[str, Any]:
        return {"policy": {self.policy_name: policy_identity(self.policy)}}

    def _act(self, request: Any, frame: np.ndarray, t: int, actions: list, max_steps: int) -> Any:
        space, names = policy_space_of(request)
        context = PolicyContext(request, t, tuple(actions), names, max_steps, int(request.generation.get("seed") or 0),
                                space)
        return checked_action(self.policy.act(frame.copy(), context), space, len(names),
                              f"policy {self.policy_name!r}", t)

    def run_one(self, request: Any) -> Generated:
        settings = self.bench.fidelity_settings(request)
        max_steps, discount = int(settings["max_steps"]), float(settings["discount"])
        env, seen = self.bench.fidelity_environment(request), initial_frame(request)
        state, frames, actions, total = self.model.start(request), [seen[None]], [], 0.0
        rows = [{"step": 0, "call": "start", "actions": [], "frames": 0, "latency_seconds": 0.0}]
        for t in range(max_steps):
            action = self._act(request, seen, t, actions, max_steps)
            _, reward, done = env.step(action)  # the action runs in the true world
            began = time.perf_counter()
            out = self.model.step(state, [action])  # the model imagines it: the policy sees only this
            seconds = time.perf_counter() - began
            state, seen = out.state, check_step_output(out, 1, self.name)[-1]
            frames.append(seen[None])
            actions.append(action)
            total += discount ** t * float(reward)
            rows.append({"step": t + 1, "call": "step", "actions": plain_actions([action]), "frames": 1,
                         "latency_seconds": seconds, "reward": float(reward)})
            if done:
                break
        episode = {"policy": self.policy_name, "return": total, "steps": len(actions),
                   "actions": plain_actions(actions), "max_steps": max_steps, "discount": discount}
        real = self.real_episode(request)
        rewards = predicted_rewards(self.model, self.bench, request, real["actions"], self.name)
        return Generated({"generated_video": np.concatenate(frames)},
                         {"steps": rows, "protocol": self.protocol, "behavioural_fidelity": episode,
                          "reward_prediction": {"true": real["rewards"], **rewards, "discount": discount,
                                                "actions": f"{self.policy_name} on real frames"}})

    def real_episode(self, request: Any) -> dict[str, Any]:
        """The same policy on the real frames, in the true simulator from the same start."""
        settings = self.bench.fidelity_settings(request)
        max_steps, discount = int(settings["max_steps"]), float(settings["discount"])
        env, frame, actions, rewards = self.bench.fidelity_environment(request), initial_frame(request), [], []
        for t in range(max_steps):
            action = self._act(request, frame, t, actions, max_steps)
            frame, reward, done = env.step(action)
            actions.append(action)
            rewards.append(float(reward))
            if done:
                break
        total = sum(discount ** t * r for t, r in enumerate(rewards))
        return {"policy": self.policy_name, "return": total, "steps": len(actions), "actions": plain_actions(actions),
                "rewards": rewards}

    def finalize(self, pairs: list, store: Any) -> list:
        done = []
        for request, result in pairs:
            info = result.metadata.get("behavioural_fidelity") if result.status == "ok" else None
            if not isinstance(info, Mapping):
                done.append((request, result))
                continue
            try:  # a policy or simulator failing on this start fails this sample only, with the reason
                real = self.real_episode(request)
                simulate = getattr(self.bench, "simulate", None)
                replay = simulate(request, list(info["actions"])) if callable(simulate) else None
            except Exception as exc:  # noqa: BLE001 - never another sample's failure, never a crash
                done.append((request, dataclasses.replace(
                    result, status="failed", artifacts={}, stop_reason="", error=f"{type(exc).__name__}: in the "
                    f"benchmark's true simulator, sample {request.sample_id!r}: {exc}")))
                continue
            metadata = {**request.metadata, "behavioural_fidelity": {"real": real, "policy": self.policy_name}}
            references, controls = dict(request.references), dict(request.controls)
            if replay is not None:
                video, extra = replay
                references["video"] = store.put_array(video, kind="video")
                controls["actions"] = list(info["actions"])
                metadata.update(dict(extra))
            request = dataclasses.replace(request, controls=controls, references=references, metadata=metadata)
            done.append((request, dataclasses.replace(result, steps=int(info["steps"]))))
        return done
