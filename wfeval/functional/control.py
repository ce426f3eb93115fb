"""Control metrics: does the generated video do what the actions say?

* :class:`ColorLocator` / :func:`locate_agent` find a solid-colour sprite (by default the
  built-in gridworld's agent) in each frame and return its top-left pixel ``(y, x)`` as floats,
  or ``None`` for a frame where it is not found.
* :func:`implied_moves` turns consecutive positions into the move they imply.
* :func:`action_following` compares the trajectory with the commanded actions and, when given,
  the true positions: per-step action accuracy and the mean position error in pixels.

A benchmark family plugs in its own ``locator`` (any ``video -> [position | None]`` callable) or
an ``inverse_dynamics`` model (any ``video -> [action name | None]`` callable, one per step).
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from wfeval.functional._video import check_video, is_tensor

Position = tuple[float, float]
# The built-in gridworld's conventions (kept in step with wfeval.benchmarks.gridworld.world by a test).
GRIDWORLD_AGENT_COLOR: tuple[int, int, int] = (225, 20, 20)
GRIDWORLD_ACTIONS: tuple[str, ...] = ("noop", "up", "down", "left", "right")
GRIDWORLD_MOVES: Mapping[str, tuple[int, int]] = {
    "noop": (0, 0), "up": (-1, 0), "down": (1, 0), "left": (0, -1), "right": (0, 1)}


__all__ = ["locate_agent", "action_following", "implied_moves", "ColorLocator"]

def _numpy(video: Any) -> np.ndarray:
    return video.detach().cpu().numpy() if is_tensor(video) else np.asarray(video)


class ColorLocator:
    """Locate a ``size×size`` sprite whose interior is filled with ``color``.

    A pixel matches when every channel is within ``tolerance`` of ``color``. The sprite is the
    ``size×size`` window holding the most matches (robust to scattered noise pixels); its
    position is refined to the centroid of the matches in and around that window, minus
    ``(size-1)/2``, so a clean sprite gives its exact top-left pixel (border included). Fewer
    than ``min_pixels`` matches in the best window: not found (``None``).

    Every frame of a video is located at once (window sums and centroids from integral images);
    an integer colour on uint8 frames is matched by integer bounds per channel. The values are
    those of the per-frame float64 computation, bit for bit (``tests/functional/test_action_following.py``).
    """

    def __init__(self, color: Sequence[int] = GRIDWORLD_AGENT_COLOR, tolerance: float = 64,
                 min_pixels: int = 4, size: int = 8):
        self.color = np.asarray(color, dtype=np.float64)
        self.tolerance, self.min_pixels, self.size = float(tolerance), int(min_pixels), int(size)
        exact = bool(np.all(self.color == np.round(self.color))) and math.isfinite(self.tolerance)
        # |v - c| <= tol for an integer v and an integer c  <=>  ceil(c - tol) <= v <= floor(c + tol)
        self._bounds = [(math.ceil(c - self.tolerance), math.floor(c + self.tolerance)) for c in self.color] \
            if exact else None

    def mask(self, video: np.ndarray) -> np.ndarray:
        """``T×H×W`` boolean: pixels within ``tolerance`` of ``color`` in every channel."""
        if self._bounds is not None and video.dtype == np.uint8:
            out = np.ones(video.shape[:-1], dtype=bool)
            for channel, (low, high) in enumerate(self._bounds):
                plane = video[..., channel]
                if low > 0:
                    out &= plane >= low
                if high < 255:
                    out &= plane <= high
            return out
        return (np.abs(video.astype(np.float64) - self.color) <= self.tolerance).all(axis=-1)

    def __call__(self, video: Any) -> list[Position | None]:
        video = _numpy(video)
        check_video(video, "video")
        if video.shape[-1] != self.color.size:
            raise ValueError(f"ColorLocator: colour has {self.color.size} channels, video has {video.shape[-1]}")
        mask = self.mask(video)
        n, height, width = mask.shape
        k = min(self.size, height, width)
        dtype = np.uint8 if k * k < 2 ** 8 else np.uint16 if k * k < 2 ** 16 else np.int64
        boxes = _sliding_sum(_sliding_sum(mask.view(np.uint8).astype(dtype), k, 1), k, 2)  # matches per k×k window
        flat = boxes.reshape(n, -1)
        best = flat.argmax(axis=1)  # the first window holding the most matches
        frames = np.arange(n)
        found = flat[frames, best] >= self.min_pixels
        y, x = np.divmod(best, boxes.shape[2])
        # the matches in and around the best window: rows y0..y1-1, columns x0..x1-1 (clipped to the frame),
        # gathered as (k+2)×(k+2) patches with the rows and columns outside the window masked out
        y0, x0 = np.maximum(0, y - 1), np.maximum(0, x - 1)
        y1, x1 = np.minimum(y + k + 1, height), np.minimum(x + k + 1, width)
        steps = np.arange(k + 2)
        ry, rx = y0[:, None] + steps, x0[:, None] + steps
        inside = (ry < y1[:, None])[:, :, None] & (rx < x1[:, None])[:, None, :]
        patch = mask[frames[:, None, None], np.minimum(ry, height - 1)[:, :, None],
                     np.minimum(rx, width - 1)[:, None, :]] & inside
        matches = patch.sum(axis=(1, 2))
        sum_y = (patch * steps[None, :, None]).sum(axis=(1, 2))  # row offsets from y0, as np.nonzero gives them
        sum_x = (patch * steps[None, None, :]).sum(axis=(1, 2))
        offset = (self.size - 1) / 2
        with np.errstate(invalid="ignore", divide="ignore"):  # min_pixels <= 0 and no match: nan, as a mean of nothing
            mean_y, mean_x = sum_y / matches, sum_x / matches
        pos_y, pos_x = (mean_y + y0) - offset, (mean_x + x0) - offset
        return [(float(py), float(px)) if ok else None for py, px, ok in zip(pos_y, pos_x, found)]


def _sliding_sum(a: np.ndarray, k: int, axis: int) -> np.ndarray:
    """Sums of ``k`` consecutive entries along ``axis`` (``L - k + 1`` of them), by doubling: sums of
    1, 2, 4, ... entries, the ones of ``k``'s binary digits added at their offsets (exact integers)."""
    def part(x: np.ndarray, start: int, stop: int) -> np.ndarray:
        index = [slice(None)] * x.ndim
        index[axis] = slice(start, stop)
        return x[tuple(index)]

    size = a.shape[axis] - k + 1
    out, start, power, width = None, 0, a, 1
    while k:
        if k & 1:
            piece = part(power, start, start + size)
            out = piece.copy() if out is None else out + piece
            start += width
        k >>= 1
        if k:
            length = power.shape[axis] - width
            power = part(power, 0, length) + part(power, width, width + length)
            width *= 2
    return out


def locate_agent(frames: Any, *, color: Sequence[int] = GRIDWORLD_AGENT_COLOR, tolerance: float = 64,
                 min_pixels: int = 4, size: int = 8) -> Position | None | list[Position | None]:
    """Top-left ``(y, x)`` of the sprite in one ``H×W×C`` frame (or ``None``), or a list per frame."""
    locator = ColorLocator(color, tolerance, min_pixels, size)
    frames = _numpy(frames)
    return locator(frames[None])[0] if frames.ndim == 3 else locator(frames)


def implied_moves(positions: Sequence[Position | None], *, size: int = 8,
                  moves: Mapping[str, tuple[int, int]] = GRIDWORLD_MOVES) -> list[str | None]:
    """Per step, the move whose displacement (``size`` px per unit) is nearest to the observed one.

    ``None`` when either position is missing; ``"other"`` when the displacement is more than
    ``size/2`` px from every move (a jump, a teleport).
    """
    out: list[str | None] = []
    for a, b in zip(positions[:-1], positions[1:]):
        if a is None or b is None:
            out.append(None)
            continue
        dy, dx = b[0] - a[0], b[1] - a[1]
        name, dist = min(((n, math.hypot(dy - my * size, dx - mx * size)) for n, (my, mx) in moves.items()),
                         key=lambda item: item[1])
        out.append(name if dist <= size / 2 else "other")
    return out


@dataclass(frozen=True)
class ActionFollowing:
    """Result of :func:`action_following` for one video (errors in pixels; ``None``: not measured)."""

    accuracy: float
    steps: int
    steps_correct: int
    frames_not_found: int
    position_error_px: float | None
    position_error_found_px: float | None
    expected: tuple[str, ...]
    implied: tuple[str | None, ...]
    per_frame_error_px: tuple[float | None, ...]


Locator = Callable[[Any], Sequence[Position | None]]
InverseDynamics = Callable[[Any], Sequence[str | None]]


def action_following(video: Any, actions: Sequence[int | str],
                     target_positions: Sequence[Sequence[float]] | None = None, *,
                     locator: Locator | None = None, inverse_dynamics: InverseDynamics | None = None,
                     action_names: Sequence[str] = GRIDWORLD_ACTIONS,
                     moves: Mapping[str, tuple[int, int]] = GRIDWORLD_MOVES, size: int = 8) -> Any:
    """Per-step action accuracy and position error of one ``T×H×W×C`` video (a list for a batch).

    * expected move of step t: the commanded action, or ``"noop"`` when ``target_positions``
      show the agent did not move (a move into a wall is blocked);
    * implied move: ``inverse_dynamics(video)`` if given, else :func:`implied_moves` of the
      ``locator``'s positions (default :class:`ColorLocator`);
    * accuracy: share of steps whose implied move equals the expected one; a step whose agent
      is not found in either frame counts as wrong;
    * position error: Euclidean distance to ``target_positions`` per frame, a frame where the
      agent is not found counting as the frame diagonal (the largest possible error);
      ``position_error_found_px`` averages the found frames only.
    """
    if getattr(video, "ndim", 0) == 5:  # a batch: one action sequence (and target track) per video
        targets = target_positions if target_positions is not None else [None] * len(video)
        return [action_following(v, a, t, locator=locator, inverse_dynamics=inverse_dynamics, action_names=action_names,
                                 moves=moves, size=size) for v, a, t in zip(video, actions, targets)]
    check_video(video, "video", min_frames=2)
    frames, height, width = video.shape[0], video.shape[1], video.shape[2]
    names = [a if isinstance(a, str) else action_names[int(a)] for a in actions]
    if len(names) != frames - 1:
        raise ValueError(f"action_following: {len(names)} actions need {len(names) + 1} frames, got {frames}")
    targets = None if target_positions is None else np.asarray(target_positions, dtype=np.float64)
    if targets is not None and targets.shape != (frames, 2):
        raise ValueError(f"action_following: target_positions must be {frames}×2, got {targets.shape}")
    expected = tuple("noop" if targets is not None and np.array_equal(targets[t], targets[t + 1]) else n
                     for t, n in enumerate(names))
    positions = list((locator or ColorLocator(size=size))(video)) if locator or inverse_dynamics is None else None
    if positions is not None and len(positions) != frames:
        raise ValueError(f"action_following: the locator gave {len(positions)} positions for {frames} frames")
    implied = tuple(inverse_dynamics(video) if inverse_dynamics else implied_moves(positions, size=size, moves=moves))
    if len(implied) != len(expected):
        raise ValueError(f"action_following: inverse_dynamics gave {len(implied)} moves for {len(expected)} steps")
    correct = sum(i == e for i, e in zip(implied, expected))
    errors: tuple[float | None, ...] = ()
    if targets is not None and positions is not None:
        errors = tuple(None if p is None else math.hypot(p[0] - t[0], p[1] - t[1]) for p, t in zip(positions, targets))
    found = [e for e in errors if e is not None]
    diagonal = math.hypot(height, width)
    return ActionFollowing(
        accuracy=correct / len(expected),
        steps=len(expected),
        steps_correct=int(correct),
        frames_not_found=sum(p is None for p in positions) if positions is not None else 0,
        position_error_px=(sum(found) + diagonal * (len(errors) - len(found))) / len(errors) if errors else None,
        position_error_found_px=sum(found) / len(found) if found else None,
        expected=expected,
        implied=implied,
        per_frame_error_px=errors,
    )
