"""``task=policy_optimization`` on Atari Pong: a compact observation, a reward read off frames, the real game.

The learner observes where the ball is against the player's (right, green) paddle, read off a frame by
colour at any resolution (the rows in units of a 64-row frame): the height gap ``ball − paddle`` in
five bins (far above, above, level, below, far below), or that the ball or the paddle is not in view.

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
BINS = (-8.0, -LEVEL, LEVEL, 8.0)  # gap edges: far above | above | level | below | far below
PLAY_ROWS = (34 / 210, 194 / 210)  # the field between the score bar and the bottom wall
DEFAULTS = {"discount": 0.95, "train_episodes": 24, "eval_episodes": 3, "warmup": 6}


def defaults(request: GenerationRequest, n_actions: int) -> Mapping[str, Any]:
    if request.metadata.get("game") != "pong":
        raise ConfigError(f"task=policy_optimization: game {request.metadata.get('game')!r} has no reward "
                          "for a learner here; benchmark=atari_pong has (wfeval/benchmarks/atari/optimization.py)")
    steps = int(request.metadata["horizon"])  # the sample's window: the video the model is asked for
    return {**DEFAULTS, "max_steps": steps, "n_actions": n_actions,
            "max_return": float(sum(DEFAULTS["discount"] ** t for t in range(steps)))}


def gap(frame: Any) -> tuple[float | None, str]:
    """Ball row minus paddle row in units of a 64-row frame, or None and what is not in view."""
    frame = np.asarray(frame).astype(np.int16)
    h, w = frame.shape[:2]
    field = frame[int(PLAY_ROWS[0] * h):int(np.ceil(PLAY_ROWS[1] * h))]
    top = int(PLAY_ROWS[0] * h)
    r, g, b = field[..., 0], field[..., 1], field[..., 2]
    paddle = (g - r > 40) & (np.arange(w)[None, :] >= 0.75 * w)
    ball = (np.minimum(np.minimum(r, g), b) > 60) & (field.max(axis=-1) - field.min(axis=-1) < 90) & ~paddle
    if not paddle.any():
        return None, "no paddle"
    if not ball.any():
        return None, "no ball"
    rows = np.arange(len(field))[:, None] + top
    at = lambda mask: float((rows * mask).sum() / mask.sum())  # noqa: E731 - the mean row of a mask
    return (at(ball) - at(paddle)) * 64.0 / h, ""


def observe(frame: Any) -> Hashable:
    value, missing = gap(frame)
    return missing if value is None else int(np.searchsorted(BINS, value))


def reward(previous: Any, frame: Any) -> tuple[float, bool]:
    value, _ = gap(frame)
    return (1.0 if value is not None and abs(value) <= LEVEL else 0.0), False


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
