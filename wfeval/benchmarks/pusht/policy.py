"""The behaviour policies of Push-T recordings.

- ``pusher`` (the default): moves the agent the way a demonstrator does. It acts on the exact state
  (agent, block centre and angle), in *pushes*: pick a push direction (towards the target pose's
  centre, turned by a seeded jitter of ``jitter`` rad; with ``wander_probability`` any direction),
  *approach* the contact point behind the block on that side (around the block, through a point
  beside it, when the agent starts in front), then *push* through the block's centre for a seeded
  ``push_min``..``push_max`` steps; a waypoint not reached in ``PATIENCE`` steps (the block in the
  way) is given up. The commanded target glides towards each waypoint by at most ``speed`` px a
  step plus Gaussian jitter of ``noise`` px (smooth paths, not jumps), clipped to [20, 492] px.
- ``random``: sticky uniform targets in [0, 512]² (the first uniform, each later one repeating its
  predecessor with ``repeat_probability``) — the noise a world model's data usually lacks.

Draws come from ``numpy.random.default_rng((seed, 0x9057))`` (PCG64, stable across numpy
versions) or, for ``random``, from sha256 of ``(seed, step)``; actions are float32 numbers.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable

import numpy as np

from wfeval.benchmarks.recorded.policy import uniforms
from wfeval.benchmarks.pusht.simulator import GOAL_POSE, HIGH, LOW, block_center

KINDS = ("pusher", "random")
VERSION = 1
MARGIN = 20.0  # commanded targets stay this far inside the arena
CONTACT_PX = 70.0  # contact point: this far behind the block's centre
AROUND_PX = 110.0  # detour point: this far beside the block's centre
PATIENCE = 20  # steps towards one waypoint before it is given up


@dataclass(frozen=True)
class PushTPolicy:
    kind: str = "pusher"
    speed: float = 25.0
    noise: float = 3.0
    jitter: float = 0.6
    wander_probability: float = 0.3
    push_min: int = 6  # steps of one push: seeded in [push_min, push_max]
    push_max: int = 14
    repeat_probability: float = 0.5
    path: Any = None  # not used (the recorded families' option, kept for the shared schema)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"benchmark.policy.kind: {self.kind!r} is not one of {', '.join(KINDS)} "
                             "(Push-T's actions are target positions, not action ids)")
        for name in ("speed", "noise", "jitter"):
            if not float(getattr(self, name)) >= 0.0:
                raise ValueError(f"benchmark.policy.{name} must be >= 0, got {getattr(self, name)!r}")
        if not float(self.speed) > 0.0:
            raise ValueError(f"benchmark.policy.speed must be > 0 px per step, got {self.speed!r}")
        for name in ("wander_probability", "repeat_probability"):
            if not 0.0 <= float(getattr(self, name)) <= 1.0:
                raise ValueError(f"benchmark.policy.{name} must be in [0, 1], got {getattr(self, name)!r}")
        steps = (self.push_min, self.push_max)
        if not all(isinstance(s, int) and not isinstance(s, bool) for s in steps) or not 1 <= steps[0] <= steps[1]:
            raise ValueError(f"benchmark.policy: need integers 1 <= push_min <= push_max, got {list(steps)}")

    def check(self, n_trajectories: int, n_steps: int, n_actions: int) -> None:
        return None

    def identity(self) -> dict[str, Any]:
        if self.kind == "random":
            return {"kind": "random", "repeat_probability": float(self.repeat_probability)}
        return {"kind": "pusher", "version": VERSION, "speed": float(self.speed), "noise": float(self.noise),
                "jitter": float(self.jitter), "wander_probability": float(self.wander_probability),
                "push_steps": [int(self.push_min), int(self.push_max)]}

    def actor(self, seed: int, trajectory: int, n: int, n_actions: int) -> Callable[[int, Any], list[float]]:
        if self.kind == "random":
            actions = sticky_targets(seed, n, float(self.repeat_probability))
            return lambda t, simulator: actions[t]
        return Pusher(np.random.default_rng((int(seed), 0x9057)), self)


def sticky_targets(seed: int, n: int, repeat_probability: float, low: float = LOW, high: float = HIGH) -> list[list[float]]:
    """``n`` float32 target positions uniform in [low, high]², each repeating the last with
    ``repeat_probability`` (sha256 draws: prefix-stable, the same with any numpy)."""
    u = uniforms(seed, n)
    v = uniforms(seed ^ 0x5EED, n)
    out: list[list[float]] = []
    for t in range(n):
        if t and v[t, 0] < repeat_probability:
            out.append(list(out[-1]))
        else:
            out.append([float(np.float32(low + u[t, k] * (high - low))) for k in range(2)])
    return out


class Pusher:
    """``pusher(t, simulator) -> [x, y]``: one seeded demonstrator, called once per step in order."""

    def __init__(self, rng: np.random.Generator, policy: PushTPolicy):
        self.rng, self.policy = rng, policy
        self.target: np.ndarray | None = None
        self.waypoints: list[np.ndarray] = []
        self.push_left, self.waited = 0, 0
        self.direction = np.zeros(2)

    def __call__(self, t: int, simulator: Any) -> list[float]:
        state = simulator.state()
        agent, center = np.asarray(state[:2], dtype=np.float64), block_center(state)
        if self.target is None:
            self.target = agent.copy()
        if not self.waypoints:
            self._plan(agent, center)
        goal = self.waypoints[0]
        if self.push_left and len(self.waypoints) == 1:  # pushing: the waypoint rides ahead of the block
            goal = center + self.direction * 50.0
            self.push_left -= 1
            if not self.push_left:
                self.waypoints.pop(0)
        else:
            self.waited += 1
            if np.linalg.norm(agent - goal) < 12.0 or self.waited > PATIENCE:
                self.waypoints.pop(0)
                self.waited = 0
                if len(self.waypoints) == 1:
                    self.push_left = int(self.rng.integers(self.policy.push_min, self.policy.push_max + 1))
        step = goal - self.target
        length = float(np.linalg.norm(step))
        if length > self.policy.speed:
            step *= self.policy.speed / length
        self.target = np.clip(self.target + step + self.rng.normal(0.0, self.policy.noise, 2), LOW + MARGIN, HIGH - MARGIN)
        return [float(np.float32(v)) for v in self.target]

    def _plan(self, agent: np.ndarray, center: np.ndarray) -> None:
        """The next push: its direction, the contact point behind the block, a detour if needed."""
        if self.rng.random() < self.policy.wander_probability:
            angle = self.rng.uniform(-math.pi, math.pi)
        else:
            to_goal = np.asarray(GOAL_POSE[:2]) - center
            angle = math.atan2(to_goal[1], to_goal[0]) + self.rng.normal(0.0, self.policy.jitter)
        self.direction = np.array([math.cos(angle), math.sin(angle)])
        contact = np.clip(center - self.direction * CONTACT_PX, LOW + MARGIN, HIGH - MARGIN)
        waypoints = []
        if float(np.dot(agent - center, self.direction)) > 0.0:  # in front of the block: go round it
            side = np.array([-self.direction[1], self.direction[0]])
            if float(np.dot(agent - center, side)) < 0.0:
                side = -side
            waypoints.append(np.clip(center + side * AROUND_PX, LOW + MARGIN, HIGH - MARGIN))
        self.waypoints = waypoints + [contact, center + self.direction * 50.0]
