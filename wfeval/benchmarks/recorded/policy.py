"""Behaviour policies that choose the actions of a recorded trajectory.

- ``uniform``: every action drawn uniformly from the action set;
- ``sticky``: the first action uniform, each later one repeats its predecessor with probability
  ``repeat_probability`` and is otherwise drawn uniformly again (runs of the same action);
- ``file``: actions read from a recorded action file (``path``): a JSON list of lists or a 2-D
  integer ``.npy`` array, one row per trajectory (row ``i`` drives trajectory ``i``).

Random draws come from sha256 of ``(seed, step)``, not from a library generator, so the same
seed gives the same actions with any numpy version, and a shorter sequence is a prefix of a
longer one.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Callable, Sequence

import numpy as np

POLICIES = ("uniform", "sticky", "file")


def uniforms(seed: int, n: int) -> np.ndarray:
    """``n × 2`` floats in [0, 1): two per step, from sha256 of ``(seed, step)``."""
    out = np.empty((n, 2), dtype=np.float64)
    for t in range(n):
        digest = hashlib.sha256(f"wfeval.policy/{seed}/{t}".encode()).digest()
        out[t, 0] = int.from_bytes(digest[:8], "little") / 2.0**64
        out[t, 1] = int.from_bytes(digest[8:16], "little") / 2.0**64
    return out


def sticky_actions(seed: int, n: int, n_actions: int, repeat_probability: float) -> list[int]:
    """Action ids in ``[0, n_actions)``; ``repeat_probability=0`` is the uniform policy."""
    u = uniforms(seed, n)
    fresh = np.minimum((u[:, 0] * n_actions).astype(np.int64), n_actions - 1)
    out: list[int] = []
    for t in range(n):
        out.append(out[-1] if t and u[t, 1] < repeat_probability else int(fresh[t]))
    return out


def sticky_vectors(seed: int, n: int, low: Sequence[float], high: Sequence[float],
                   repeat_probability: float) -> list[list[float]]:
    """``n`` action vectors of a continuous space, each element uniform in its ``[low, high]`` and
    rounded to float32, each vector repeating its predecessor with ``repeat_probability`` (the
    continuous twin of :func:`sticky_actions`: sha256 draws, prefix-stable)."""
    repeat = uniforms(seed, n)[:, 1]
    out: list[list[float]] = []
    for t in range(n):
        if t and repeat[t] < repeat_probability:
            out.append(list(out[-1]))
            continue
        vector = []
        for k, (lo, hi) in enumerate(zip(low, high)):
            digest = hashlib.sha256(f"wfeval.policy/{seed}/{t}/{k}".encode()).digest()
            value = float(np.float32(lo + int.from_bytes(digest[:8], "little") / 2.0**64 * (hi - lo)))
            vector.append(min(max(value, float(lo)), float(hi)))  # float32 rounding stays within the bounds
        out.append(vector)
    return out


def own_actions(own: tuple[int, Any], n: int, repeat_probability: float) -> list[Any]:
    """A baseline's own ``n`` sticky random actions; ``own`` is ``(seed, n_actions)`` for a discrete
    game or ``(seed, (low, high))`` for a continuous one (:func:`sticky_vectors` within the bounds)."""
    seed, space = own
    if isinstance(space, int):
        return sticky_actions(seed, n, space, repeat_probability)
    return sticky_vectors(seed, n, space[0], space[1], repeat_probability)


@dataclass(frozen=True)
class Policy:
    kind: str = "sticky"
    repeat_probability: float = 0.5
    path: str | None = None

    def __post_init__(self) -> None:
        if self.kind not in POLICIES:
            raise ValueError(f"benchmark.policy.kind: {self.kind!r} is not one of {', '.join(POLICIES)}")
        if not 0.0 <= float(self.repeat_probability) <= 1.0:
            raise ValueError(f"benchmark.policy.repeat_probability must be in [0, 1], got {self.repeat_probability}")
        if self.kind == "file" and not self.path:
            raise ValueError("benchmark.policy.path: the file policy needs a recorded action file")

    def rows(self) -> list[list[int]]:
        """The action file's rows (``kind=file`` only)."""
        path = Path(str(self.path)).expanduser()
        try:
            if path.suffix == ".npy":
                data: Any = np.load(path, allow_pickle=False).tolist()
            else:
                data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise ValueError(f"benchmark.policy.path: cannot read {path}: {exc}") from exc
        if not isinstance(data, list) or not all(isinstance(row, list) for row in data):
            raise ValueError(f"benchmark.policy.path: {path} must hold a list of action lists (one per trajectory)")
        for i, row in enumerate(data):
            if not all(isinstance(a, int) and not isinstance(a, bool) for a in row):
                raise ValueError(f"benchmark.policy.path: {path} row {i} holds a non-integer action")
        return data

    def check(self, n_trajectories: int, n_steps: int, n_actions: int) -> None:
        """Refuse an action file that cannot drive the configured trajectories."""
        if self.kind != "file":
            return
        rows = self.rows()
        if len(rows) < n_trajectories:
            raise ValueError(f"benchmark.policy.path: {self.path} has {len(rows)} row(s), "
                             f"{n_trajectories} trajectories need one each")
        for i, row in enumerate(rows[:n_trajectories]):
            if len(row) < n_steps:
                raise ValueError(f"benchmark.policy.path: {self.path} row {i} has {len(row)} actions, "
                                 f"a trajectory needs {n_steps}")
            bad = [a for a in row[:n_steps] if not 0 <= a < n_actions]
            if bad:
                raise ValueError(f"benchmark.policy.path: {self.path} row {i}: action {bad[0]} is outside "
                                 f"[0, {n_actions - 1}] (the benchmark's action set)")

    def identity(self) -> dict[str, Any]:
        """What the recorded data depends on (the file's content, not its path)."""
        if self.kind == "file":
            digest = hashlib.sha256(json.dumps(self.rows(), separators=(",", ":")).encode()).hexdigest()
            return {"kind": "file", "actions_sha256": digest}
        if self.kind == "uniform":
            return {"kind": "uniform"}
        return {"kind": "sticky", "repeat_probability": float(self.repeat_probability)}

    def actor(self, seed: int, trajectory: int, n: int, n_actions: int) -> Callable[[int, Any], int]:
        """``actor(t, simulator) -> action`` for step ``t``: these policies ignore the simulator and
        play their precomputed actions; a family's policy may act on the simulator's state."""
        actions = self.actions(seed, trajectory, n, n_actions)
        return lambda t, simulator: actions[t]

    def actions(self, seed: int, trajectory: int, n: int, n_actions: int) -> list[int]:
        if self.kind == "file":
            return [int(a) for a in self.rows()[trajectory][:n]]
        p = 0.0 if self.kind == "uniform" else float(self.repeat_probability)
        return sticky_actions(seed, n, n_actions, p)
