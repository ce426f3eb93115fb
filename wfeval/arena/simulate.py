"""A simulated rater, for calibration without people: it prefers the video closer to the reference
(mean squared error over the frames both have) and, with probability ``noise``, votes A or B at
random instead (``noise=1``: a rater who votes at random). Equal distances are a tie. It casts
votes through :class:`~wfeval.arena.core.Arena`, as the web page does.
"""

from __future__ import annotations

import numpy as np

from wfeval.arena.core import Arena, Issued


def distance(video: np.ndarray | None, reference: np.ndarray | None) -> float:
    if video is None or reference is None:
        return float("inf")
    n = min(len(video), len(reference))
    if n == 0 or video.shape[1:] != reference.shape[1:]:
        return float("inf")
    return float(np.mean((video[:n].astype(np.float64) - reference[:n].astype(np.float64)) ** 2))


def judge(arena: Arena, issued: Issued, noise: float, rng: np.random.Generator) -> str:
    if rng.random() < noise:
        return "a" if rng.random() < 0.5 else "b"
    sample = issued.candidate.sample_id
    reference = arena.pool.video(issued.left, sample, "reference")
    left = distance(arena.pool.video(issued.left, sample), reference)
    right = distance(arena.pool.video(issued.right, sample), reference)
    return "tie" if left == right else ("a" if left < right else "b")


def simulate(arena: Arena, votes: int, *, rater: str = "simulated", noise: float = 0.0, seed: int = 0) -> int:
    """Cast up to ``votes`` votes as ``rater``; how many were cast (fewer when every pair is judged)."""
    if not 0.0 <= noise <= 1.0:
        raise ValueError(f"noise must be in [0, 1], got {noise}")
    rng = np.random.default_rng(seed)
    session = arena.new_session()
    cast = 0
    while cast < votes:
        issued = arena.next_pair(session, rater)
        if issued is None:
            break
        arena.vote(session, issued.pair_id, judge(arena, issued, noise, rng))
        cast += 1
    return cast
