"""``protocol=policy_evaluation`` (``task=policy_evaluation`` selects it): the world model as a policy
evaluator (WorldArena). K policies — the benchmark's scripted set of different skill
(:class:`~wfeval.tasks.policy_evaluation.PolicyEvaluationFamily`), or the names in ``protocol.policies``,
where ``policy`` stands for the run's ``policy`` group (your own: ``policy=user
policy._target_=my_pkg.MyPolicy``) — each run in closed loop inside the model from the sample's
start (the policy sees the model's frames) and, in :meth:`PolicyEvaluationDriver.finalize`, in the
benchmark's true simulator from the same start. A return is the discounted sum of rewards over at
most ``max_steps`` steps (the benchmark's ``policy_settings``); inside the model the reward is the
model's own when its ``StepOutput`` carries one, else the benchmark's reward read off the frames.

Outputs: ``generated_video`` (the first policy inside the model) and ``policy_<i>_video`` for every
policy i; ``result.metadata["policy_evaluation"]["model"]`` the returns inside the model; the
finalized request's ``metadata["policy_evaluation"]["true"]`` the true returns, its actions and
reference the first policy's in-model actions replayed in the simulator (reference metrics apply).
"""

from __future__ import annotations

import dataclasses
import time
from typing import Any, Mapping, Sequence

import numpy as np

from wfeval.config.errors import ConfigError
from wfeval.models.base import initial_frame, plain_actions
from wfeval.models.protocol import Generated, check_step_output, step_rewards
from wfeval.protocols.base import Protocol, ProtocolRun
from wfeval.protocols.drivers import Driver
from wfeval.protocols.policies import PolicyContext, check_policy, checked_action, policy_space_of
from wfeval.tasks import policy_evaluation
from wfeval.tasks.family import objective_from_frames

RUN_POLICY = "policy"  # in protocol.policies: the run's `policy` group


class PolicyEvaluation(Protocol):
    driver = "policy_evaluation"
    task_kinds = ("policy_evaluation",)
    uses_policy = True
    family_need = policy_evaluation.NEED

    def __init__(self, policies: Sequence[str] | None = None):
        if policies is not None and (isinstance(policies, str) or len(policies) < 2):
            raise ConfigError(f"protocol.policies: a list of at least 2 policy names (null: the benchmark's scripted "
                              f"set), got {policies!r}")
        self.policies = None if policies is None else [str(p) for p in policies]

    def identity(self, run: ProtocolRun) -> dict[str, Any]:
        uses_run_policy = RUN_POLICY in (self.policies or ())
        return {**super().identity(run), "policies": self.policies, "task_data": run.task.to_dict()["data"],
                **({"policy": run.policy} if uses_run_policy else {})}

    def drive(self, model: Any, benchmark: Any, store: Any, run: ProtocolRun, policy: Any = None) -> Any:
        scripted = dict(benchmark.scripted_policies())
        chosen: dict[str, Any] = {}
        for name in self.policies or list(scripted):
            if name == RUN_POLICY:
                try:
                    chosen[str(getattr(policy, "name", "") or RUN_POLICY)] = check_policy(policy)
                except ValueError as exc:
                    raise ConfigError(str(exc)) from exc
            elif name in scripted:
                chosen[name] = scripted[name]
            else:
                raise ConfigError(f"protocol.policies: {name!r} is not one of the benchmark's policies "
                                  f"({', '.join(scripted)}) nor {RUN_POLICY!r} (the run's policy group)")
        if len(chosen) < 2:
            raise ConfigError("protocol=policy_evaluation ranks policies: it needs at least 2 distinct ones")
        return PolicyEvaluationDriver(model, chosen, benchmark)


class PolicyEvaluationDriver(Driver):
    protocol = "policy_evaluation"

    def __init__(self, model: Any, policies: Mapping[str, Any], benchmark: Any):
        super().__init__(model)
        self.policies, self.bench = dict(policies), benchmark
        self.own_reward = not objective_from_frames(benchmark)  # the model's reward counts, when it has one

    def _context(self, request: Any, t: int, actions: list, max_steps: int) -> PolicyContext:
        space, names = policy_space_of(request)
        return PolicyContext(request, t, tuple(actions), names, max_steps, int(request.generation.get("seed") or 0),
                             space)

    def _act(self, name: str, policy: Any, frame: np.ndarray, context: PolicyContext) -> Any:
        """The policy's action, checked against the benchmark's actions (a bad one fails this sample)."""
        action = policy.act(frame.copy(), context)
        return checked_action(action, context.action_space, len(context.action_names), f"policy {name!r}",
                              context.step)

    def _rollout(self, request: Any, name: str, policy: Any, settings: Mapping[str, Any], rows: list) -> tuple:
        max_steps, discount = int(settings["max_steps"]), float(settings["discount"])
        frame = initial_frame(request)
        state, frames, actions, total, sources = self.model.start(request), [frame[None]], [], 0.0, set()
        for t in range(max_steps):
            action = self._act(name, policy, frame, self._context(request, t, actions, max_steps))
            began = time.perf_counter()
            out = self.model.step(state, [action])
            seconds = time.perf_counter() - began
            state, previous = out.state, frame
            frame = check_step_output(out, 1, self.name)[-1]
            frames.append(frame[None])
            actions.append(action)
            own = step_rewards(out, 1, self.name)  # checked: length, type, finite; done a bool
            if own is not None and self.own_reward:
                reward, done = float(own[0][-1]), bool(own[1][-1])
                sources.add("model")
            else:
                reward, done = self.bench.frame_reward(request, previous, frame, t + 1)
                sources.add("frames")
            total += discount ** t * float(reward)
            rows.append({"step": len(rows) + 1, "call": "step", "policy": name, "actions": plain_actions([action]),
                         "frames": 1, "latency_seconds": seconds, "reward": float(reward)})
            if done:
                break
        info = {"return": total, "steps": len(actions), "actions": plain_actions(actions),  # JSON: lists, not arrays
                "reward_source": "+".join(sorted(sources))}
        return np.concatenate(frames), info

    def run_one(self, request: Any) -> Generated:
        settings = self.bench.policy_settings(request)
        outputs, model = {}, {}
        rows = [{"step": 0, "call": "start", "actions": [], "frames": 0, "latency_seconds": 0.0}]
        for i, (name, policy) in enumerate(self.policies.items()):
            video, model[name] = self._rollout(request, name, policy, settings, rows)
            outputs[f"policy_{i}_video"] = video
            outputs.setdefault("generated_video", video)
        return Generated(outputs, {"steps": rows, "protocol": self.protocol, "policy_evaluation": {
            "policies": list(self.policies), "model": model, **dict(settings)}})

    def true_returns(self, request: Any) -> dict[str, Any]:
        """Every policy in the benchmark's true simulator from the sample's start (its own reward)."""
        settings = self.bench.policy_settings(request)
        max_steps, discount = int(settings["max_steps"]), float(settings["discount"])
        out = {}
        for name, policy in self.policies.items():
            env, frame, actions, total = self.bench.policy_environment(request), initial_frame(request), [], 0.0
            for t in range(max_steps):
                action = self._act(name, policy, frame, self._context(request, t, actions, max_steps))
                frame, reward, done = env.step(action)
                actions.append(action)
                total += discount ** t * float(reward)
                if done:
                    break
            out[name] = {"return": total, "steps": len(actions), "actions": plain_actions(actions)}
        return out

    def finalize(self, pairs: list, store: Any) -> list:
        done = []
        for request, result in pairs:
            info = result.metadata.get("policy_evaluation") if result.status == "ok" else None
            if not isinstance(info, Mapping):
                done.append((request, result))
                continue
            first = info["model"][info["policies"][0]]["actions"]
            try:  # a policy or simulator failing on this start fails this sample only, with the reason
                video, meta = self.bench.simulate(request, first)
                true = self.true_returns(request)
            except Exception as exc:  # noqa: BLE001 - never another sample's failure, never a crash
                done.append((request, dataclasses.replace(
                    result, status="failed", artifacts={}, stop_reason="", error=f"{type(exc).__name__}: in the "
                    f"benchmark's true simulator, sample {request.sample_id!r}: {exc}")))
                continue
            request = dataclasses.replace(
                request, controls={**request.controls, "actions": list(first)},
                references={**request.references, "video": store.put_array(video, kind="video")},
                metadata={**request.metadata, **dict(meta), "policy_evaluation": {
                    "true": true, "replayed_by": "benchmark simulator",
                    "reference": f"{info['policies'][0]}'s actions inside the model, replayed"}})
            done.append((request, dataclasses.replace(result, steps=len(first))))
        return done
