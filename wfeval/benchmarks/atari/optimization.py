"""``task=policy_optimization`` on Atari Pong: a compact observation, a reward read off frames, the real game.

The learner observes where the ball is against the player's (right, green) paddle, read off a frame by
colour at any resolution (the rows in units of a 64-row frame): the height gap ``ball − paddle`` in
three bins (above, level, below) and where the ball is going since the previous
frame (up, down, still; unknown at a start), or that the ball or the paddle is not in view. A model
that freezes the game shows a ball that never moves: what its learner learns is met in the real game
only when the ball flies flat.

The reward is Pong's **tracking** reward: 1 for every step after which the paddle is level with the
ball (within :data:`LEVEL` rows), else 0 -- a reward function of the state the frame shows, applied
the same way to the real frames and to the model's predicted ones. The game's own score changes once
in a hundred steps or more, too rarely for a budget this small; tracking is what returns the ball.
Episodes: :data:`DEFAULTS`, each as long as the sample's window (``benchmark.horizon`` steps, 16); the
largest return is ``sum(0.95**t, t < max_steps)``.

Starts: the sample's saved emulator state (the model's start), or, held out, that state continued by
``warmup`` uniformly random actions.
"""

from __future__ import annotations

from typing import Any, Hashable, Mapping

import numpy as np

from wfeval.api import GenerationRequest
from wfeval.config.errors import ConfigError

LEVEL = 3.0  # rows of a 64-row frame: the paddle is level with the ball
BINS = (-LEVEL, LEVEL)  # gap edges: above | level | below
MOVING = 0.5  # rows of a 64-row frame the ball must move between two frames to be going up or down
FIELD = (35 / 210, 193 / 210)  # the rows between the score bar's wall and the bottom wall
DEFAULTS = {"discount": 0.95, "train_episodes": 24, "eval_episodes": 3, "warmup": 6}


def defaults(request: GenerationRequest, n_actions: int) -> Mapping[str, Any]:
    if request.metadata.get("game") != "pong":
        raise ConfigError(f"task=policy_optimization: game {request.metadata.get('game')!r} has no reward "
                          "for a learner here; benchmark=atari_pong has (wfeval/benchmarks/atari/optimization.py)")
    steps = int(request.metadata["horizon"])  # the sample's window: the video the model is asked for
    return {**DEFAULTS, "max_steps": steps, "n_actions": n_actions,
            "max_return": float(sum(DEFAULTS["discount"] ** t for t in range(steps)))}


def rows(frame: Any) -> tuple[float | None, float | None]:
    """The ball's and the player's paddle's mean rows in units of a 64-row frame (None: not in view):
    the ball white (its pixels, blended with the brown field, keep red > 150 and blue > 100), the paddle
    green (green above red by 40) in the right quarter."""
    frame = np.asarray(frame)
    h, w = frame.shape[:2]
    top, bottom = int(np.ceil(FIELD[0] * h)), int(FIELD[1] * h)
    field = frame[top:bottom].astype(np.int16)
    r, g, b = field[..., 0], field[..., 1], field[..., 2]
    paddle = (g - r > 40) & (np.arange(w)[None, :] >= 0.75 * w)
    ball = (r > 150) & (b > 100)
    at = np.arange(top, bottom, dtype=np.float64)[:, None] * 64.0 / h
    mean = lambda mask: float((at * mask).sum() / mask.sum()) if mask.any() else None  # noqa: E731
    return mean(ball), mean(paddle)


def observe(previous: Any, frame: Any) -> Hashable:
    """(the gap bin, where the ball is going: up, down, still, or unknown at a start), or what is not in view."""
    ball, paddle = rows(frame)
    if paddle is None or ball is None:
        return "no paddle" if paddle is None else "no ball"
    before = None if previous is None else rows(previous)[0]
    going = "unknown" if before is None else "up" if ball - before < -MOVING else \
        "down" if ball - before > MOVING else "still"
    return int(np.searchsorted(BINS, ball - paddle)), going


def reward(previous: Any, frame: Any) -> tuple[float, bool]:
    ball, paddle = rows(frame)
    return (1.0 if ball is not None and paddle is not None and abs(ball - paddle) <= LEVEL else 0.0), False


class Environment:
    """The real game of one sample: reset to its saved state (or a held-out start after it), stepped on."""

    def __init__(self, request: GenerationRequest, simulator: Any, first: np.ndarray):
        from wfeval.benchmarks.recorded.resize import area_resize

        self.info, self.sim, self.first = request.metadata["simulator"], simulator, first
        self.resize = lambda f: area_resize(np.asarray(f)[None], self.info.get("resize"))[0]

    def reset(self, episode: int, seed: Any, warmup: int) -> np.ndarray:
        self.sim.restore(self.info["state"])
        frame = self.first
        if episode:
            n = len(self.sim.action_names)
            for action in np.random.default_rng(seed).integers(0, n, size=warmup):
                frame = self.resize(self.sim.step(int(action)).frame)
        return frame

    def step(self, action: int) -> np.ndarray:
        return self.resize(self.sim.step(int(action)).frame)
