"""Policies for ``protocol=closed_loop`` (config group ``policy``): who picks the next action.

A policy is any object with ``act(frame, context) -> action``: ``frame`` is the model's latest
frame (H×W×3 uint8; the initial frame at step 0), ``context`` a :class:`PolicyContext` (the
request, the step index, the actions chosen so far, the action names, the horizon, the seed).
It must be a pure function of its arguments (no hidden state across samples), so a rollout is
reproducible and cacheable. Built-in: ``random`` (seeded per sample), ``scripted`` (the
benchmark's own action list: closed loop then replays open loop), ``noop``; a user policy is
``policy=user policy._target_=my_pkg.MyPolicy``.

Continuous actions (``context.action_space`` of kind ``continuous``): ``random`` draws each element
uniformly within the declared bounds (an unbounded space is refused, saying so), ``noop`` returns the
zero vector (clipped into the bounds), ``scripted`` the benchmark's vectors. Whatever a policy
returns is checked against the space before the model sees it: a wrong shape, NaN or a value out
of bounds fails that sample, naming the step and the element.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Sequence

import numpy as np

from wfeval.api import ActionSpace, GenerationRequest, action_space_of
from wfeval.models.base import continuous_actions, uniform_action
from wfeval.models.base import hashed_uniform as _uniform


@dataclass(frozen=True)
class PolicyContext:
    request: GenerationRequest
    step: int  # index of the action to choose (0 = the first)
    actions: tuple[Any, ...]  # chosen so far
    action_names: tuple[str, ...]  # discrete: one per action id; continuous: the elements' names (may be empty)
    horizon: int  # actions in the rollout
    seed: int  # the sample's generation seed
    action_space: ActionSpace | None = None  # the benchmark's (continuous: shape, dtype, bounds)


def action_names_of(request: GenerationRequest) -> tuple[str, ...]:
    names = request.controls.get("action_names")
    if names:
        return tuple(str(n) for n in names)
    raise ValueError(f"sample {request.sample_id!r}: no controls['action_names'], so a policy cannot know "
                     "the action set")


def policy_space_of(request: GenerationRequest) -> tuple[ActionSpace | None, tuple[str, ...]]:
    """(the continuous action space, its element names) of a request with continuous actions,
    else (None, the discrete action names: ValueError when the request has none)."""
    space = action_space_of(request)
    if space is not None and space.is_continuous:
        return space, tuple(space.names)
    return None, action_names_of(request)


class RandomPolicy:
    """Uniform random actions; with ``p_repeat`` > 0 the previous action is kept with that
    probability (runs of one action). Seeded from (``seed``, the sample's seed, the step)."""

    name = "random"

    def __init__(self, seed: int = 0, p_repeat: float = 0.5):
        if not 0.0 <= p_repeat <= 1.0:
            raise ValueError(f"policy.p_repeat must be in [0, 1], got {p_repeat}")
        self.seed, self.p_repeat = int(seed), float(p_repeat)

    def act(self, frame: np.ndarray, context: PolicyContext) -> Any:
        key = (self.seed, context.seed, context.request.sample_id, context.step)
        space = context.action_space
        if space is not None and space.is_continuous:
            if context.actions and _uniform("repeat", *key) < self.p_repeat:
                return np.array(context.actions[-1], dtype=space.dtype)
            return uniform_action(space, key)
        n = len(context.action_names)
        if context.actions and _uniform("repeat", *key) < self.p_repeat:
            return int(context.actions[-1])
        return min(int(_uniform("fresh", *key) * n), n - 1)


class ScriptedPolicy:
    """The benchmark's fixed action list for the sample (``controls["actions"]``), in order."""

    name = "scripted"

    def act(self, frame: np.ndarray, context: PolicyContext) -> Any:
        script = context.request.controls.get("actions")
        if script is None or context.step >= len(script):
            raise ValueError(f"sample {context.request.sample_id!r}: the scripted policy has no action for step "
                             f"{context.step} (controls['actions'] has {len(script or ())})")
        return script[context.step]


class NoopPolicy:
    """Always the action named ``noop`` (any case; ``NOOP`` on Atari), else action 0."""

    name = "noop"

    def act(self, frame: np.ndarray, context: PolicyContext) -> Any:
        space = context.action_space
        if space is not None and space.is_continuous:  # the zero action (clipped into the bounds)
            zero = np.zeros(space.shape, dtype=space.dtype)
            found = space.bounds()
            if found is None:
                return zero
            return np.clip(zero, np.asarray(found[0], space.dtype).reshape(space.shape),
                           np.asarray(found[1], space.dtype).reshape(space.shape))
        lowered = [n.lower() for n in context.action_names]
        return lowered.index("noop") if "noop" in lowered else 0


def checked_action(action: Any, space: ActionSpace | None, n_actions: int, who: str, step: int) -> Any:
    """A policy's action as the model gets it: a discrete id as an int; a continuous action as a
    read-only array of the space's shape and dtype, after checking it belongs to the space. A wrong
    shape, NaN, a value out of bounds, a non-integral or unknown id (2.7) is a ValueError naming
    ``who`` (the policy) and the step: the sample's own failure, never a crash or a silent score."""
    if space is None:
        problem = ActionSpace.discrete(n=n_actions).problem([action], first=step)
        if problem:
            raise ValueError(f"{who} at step {step}: {problem} (the benchmark's {n_actions} actions are ids "
                             f"0..{n_actions - 1})")
        return int(action)
    return continuous_actions([action], space, f"{who} at step {step}")[0]


def check_policy(policy: Any) -> Any:
    if not callable(getattr(policy, "act", None)):
        raise ValueError(f"policy: {type(policy).__name__} has no act(frame, context) method "
                         "(see wfeval/protocols/policies.py)")
    return policy


__all__: Sequence[str] = ["NoopPolicy", "PolicyContext", "RandomPolicy", "ScriptedPolicy", "action_names_of",
                          "checked_action",
                          "policy_space_of", "uniform_action"]
