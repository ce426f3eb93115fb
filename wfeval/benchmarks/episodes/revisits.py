"""``task=memory`` on a dataset: revisits found where the recorded state returns (docs/dataset-readers.md#memory).

A dataset cannot plan a trajectory that leaves and comes back (gridworld and memory_maze do, from
their exact state); it holds what its episodes did. Where an episode records a pose or state
(LeRobot's ``observation.state``, HDF5's ``obs/<key>``, a Minari Dict observation's key), the
revisits are found in it, per sample (the frames ``b … b+H`` the model generates):

- the distance of two frames' states is the largest absolute difference of the compared elements
  (``task.data.memory.state_dims``; default all), in the state's own units;
- frame ``j`` revisits frame ``i < j`` when their distance is within ``tolerance`` and the state
  *left* in between (some frame between them is farther than ``tolerance`` from frame ``i``:
  standing still is not a revisit); its first visit is the earliest such ``i``
  (:func:`return_pairs`; one pair per revisiting frame);
- a sample is kept for the task when it holds at least one revisit; the others are not memory
  samples (their count is said before generation).

What must be the same for a pair to count: the state (within ``tolerance``), and, where the two
frames are compared, the dataset's own frames: ``revisit_error`` compares the model's change
between the two frames with the true change, only on the blocks where the dataset's two frames
agree within ``frame_tolerance`` uint8 levels (``metadata["memory"]["agree"]``): something that
moved in the scene (an object pushed, a person walking by) is left out, and a pair where no block
agrees is dropped. The pairs are the loops of ``reversibility_error`` too (a return of the state is
the world brought back where it was), so the two measures coincide on a dataset, as on memory_maze.

Refused before generation, in one paragraph (ConfigError): a dataset that records no state, a
``state_key`` it does not have (naming the keys it has), state elements out of range, and no revisit
within ``tolerance`` in any sample (naming the closest return found, the option to change, and the
closest over whole episodes when a longer ``benchmark.horizon`` would hold one).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Mapping

import numpy as np

from wfeval.config.errors import ConfigError
from wfeval.tasks.memory import DATASET_KEYS, PLANNED_KEYS

if TYPE_CHECKING:
    from wfeval.benchmarks.episodes.base import EpisodeBenchmark

DEFAULT_TOLERANCE = 0.01  # in the state's units (metres, radians: 1 cm, 0.6°)
DEFAULT_FRAME_TOLERANCE = 8.0  # uint8 levels of block means
MEASURE = "change_vs_truth"  # wfeval.metrics.memory.TRUTH: the model's change against the true change
SOURCE = "dataset_state"
HINT_FRAMES = 1024  # the whole-episode hint reads episodes up to this length


@dataclass(frozen=True)
class RevisitSettings:
    state_key: str | None
    tolerance: float
    state_dims: tuple[int, ...] | None
    frame_tolerance: float


def settings(memory: Mapping[str, Any] | None) -> RevisitSettings:
    """``task.data.memory`` checked for a dataset (ConfigError naming the key)."""
    memory = dict(memory or {})
    unknown = sorted(set(memory) - {*PLANNED_KEYS, *DATASET_KEYS})
    if unknown:
        known = ", ".join(PLANNED_KEYS + DATASET_KEYS)
        raise ConfigError(f"task.data.memory: unknown key(s) {unknown}; known: {known}")
    if memory.get("gaps") is not None:
        raise ConfigError("task.data.memory.gaps: a dataset cannot plan its revisits; they are found where its "
                          "recorded state returns, at the gaps its episodes hold (leave gaps null; "
                          "task.data.memory.tolerance sets how close a return must be)")
    key = memory.get("state_key")
    if key is not None and (not isinstance(key, str) or not key):
        raise ConfigError(f"task.data.memory.state_key must be a non-empty string or null, got {key!r}")
    tolerance = _number("tolerance", memory.get("tolerance"), DEFAULT_TOLERANCE)
    frame_tolerance = _number("frame_tolerance", memory.get("frame_tolerance"), DEFAULT_FRAME_TOLERANCE)
    dims = memory.get("state_dims")
    if dims is not None:
        if isinstance(dims, (str, bytes)) or not hasattr(dims, "__iter__"):
            raise ConfigError(f"task.data.memory.state_dims must be a list of element indices or null, got {dims!r}")
        dims = list(dims)
        if not dims or not all(isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in dims) \
                or len(set(dims)) != len(dims):
            raise ConfigError("task.data.memory.state_dims must be a non-empty list of distinct element indices "
                              f"(integers >= 0), got {dims!r}")
        dims = tuple(dims)
    return RevisitSettings(key, tolerance, dims, frame_tolerance)


def _number(name: str, value: Any, default: float) -> float:
    if value is None:
        return default
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not np.isfinite(value) or value < 0:
        raise ConfigError(f"task.data.memory.{name} must be a finite number >= 0 or null, got {value!r}")
    return float(value)


# -- the pairs of one stretch of states: closed form ---------------------------------------------------


@dataclass
class Returns:
    """The revisits of one stretch of frames: ``pairs`` ``(first visit, revisit)`` with their state
    ``distances``; ``closest``: ``(distance, i, j, farthest)`` of the closest return, whatever the
    tolerance (frame ``j`` nearer to frame ``i``'s state than the ``farthest`` a frame between them
    went: any tolerance in ``[distance, farthest)`` counts it), None when the state never comes back
    towards an earlier frame's."""

    pairs: list[tuple[int, int]] = field(default_factory=list)
    distances: list[float] = field(default_factory=list)
    closest: tuple[float, int, int, float] | None = None


def distance_matrix(states: Any) -> np.ndarray:
    """``T×T``: the largest absolute difference of an element between two frames' states."""
    states = np.asarray(states, dtype=np.float64)
    states = states.reshape(len(states), -1)
    dist = np.zeros((len(states), len(states)))
    for column in states.T:  # one element at a time: T² numbers in memory, whatever the width
        np.maximum(dist, np.abs(column[:, None] - column[None, :]), out=dist)
    return dist


def return_pairs(states: Any, tolerance: float) -> Returns:
    """The revisits of a ``T×D`` array of states (a ``T`` array: one element): for each frame ``j``,
    the earliest ``i < j`` whose state is within ``tolerance`` of ``j``'s (:func:`distance_matrix`)
    after being left in between (a frame ``k`` in ``(i, j)`` farther than ``tolerance`` from ``i``)."""
    dist = distance_matrix(states)
    n = len(dist)
    out = Returns()
    for i in range(n - 2):
        row = dist[i, i + 1:]
        farthest = np.maximum.accumulate(row)[:-1]  # farthest[m - 1]: the farthest of frames i+1 … i+m
        after = row[1:]  # frame j = i + 1 + m, m >= 1
        back = np.nonzero(after < farthest)[0]
        if len(back):
            m = int(back[np.argmin(after[back])])
            if out.closest is None or after[m] < out.closest[0]:
                out.closest = (float(after[m]), i, i + 2 + m, float(farthest[m]))
    if n < 3:
        return out
    far = np.triu(dist > tolerance, k=1)
    left_at = np.where(far.any(axis=1), np.argmax(far, axis=1), n)  # the first frame farther than it, after i
    back = (dist <= tolerance) & (np.arange(n)[None, :] > left_at[:, None])  # (i, j): j near i, i left before j
    for j in np.nonzero(back.any(axis=0))[0]:
        i = int(np.argmax(back[:, j]))  # the earliest first visit
        out.pairs.append((i, int(j)))
        out.distances.append(float(dist[i, j]))
    return out


# -- the samples of a dataset --------------------------------------------------------------------------


@dataclass
class RevisitPlan:
    """Per sample id its revisits; what was read (key, elements) and what a refusal or report says."""

    settings: RevisitSettings
    key: str
    width: int
    samples: dict[str, Returns]
    candidates: int  # samples whose states were read


def find(bench: "EpisodeBenchmark", memory: Mapping[str, Any] | None) -> RevisitPlan:
    """The revisits of every sample of ``bench`` (ConfigError when there are none, naming why)."""
    chosen = settings(memory)
    key = bench.state_column(chosen.state_key)
    states: dict[int, np.ndarray] = {}
    width = None
    for index, episode in enumerate(bench.episodes):
        if episode.errors:
            bench.problem(episode, "its revisits cannot be found: the episode is unreadable "
                                   f"({'; '.join(episode.errors)})")
            continue
        try:
            array = np.asarray(bench.read_states(episode, key))
            if array.ndim not in (1, 2) or not np.issubdtype(array.dtype, np.number):
                raise ValueError(f"expected a T or T×D array of numbers, found {array.dtype} {array.shape}")
            if len(array) < episode.length:
                raise ValueError(f"{len(array)} state row(s) for {episode.length} frames")
        except ValueError as exc:
            bench.problem(episode, f"state {key!r}: {exc}; its samples are left out")
            continue
        array = array.reshape(len(array), -1)[:episode.length].astype(np.float64)
        if width is not None and array.shape[1] != width:
            raise ConfigError(f"task.data.memory.state_key: {key!r} has {array.shape[1]} element(s) in "
                              f"{bench.where(episode)} and {width} in an earlier episode")
        width = array.shape[1]
        states[index] = array
    if width is None:
        raise ConfigError(f"task=memory: no episode of {bench.root} has a readable state {key!r}\n" + bench.report())
    dims = chosen.state_dims
    if dims is not None and max(dims) >= width:
        raise ConfigError(f"task.data.memory.state_dims: {list(dims)} names element {max(dims)}, but state {key!r} "
                          f"has {width} element(s) (0 … {width - 1})")
    H = bench.horizon
    samples: dict[str, Returns] = {}
    closest: tuple[float, str, int, int, float] | None = None
    candidates = 0
    for window in bench.records():
        array = states.get(window.episode)
        if array is None:
            continue
        b = window.start + bench.context_frames - 1
        part = array[b:b + H + 1] if dims is None else array[b:b + H + 1, list(dims)]
        if not np.isfinite(part).all():
            bench.problem(bench.episodes[window.episode], f"state {key!r} is not finite in frames {b}..{b + H}: "
                          "its revisits cannot be found", window.sample_id)
            continue
        candidates += 1
        found = return_pairs(part, chosen.tolerance)
        if found.pairs:
            samples[window.sample_id] = found
        if found.closest is not None and (closest is None or found.closest[0] < closest[0]):
            closest = (found.closest[0], window.sample_id, *found.closest[1:])
    plan = RevisitPlan(chosen, key, width, samples, candidates)
    if bench.strict and bench.problems:
        raise ConfigError(bench.report(header="benchmark.strict: the dataset has problems; nothing was generated"))
    if not samples:
        raise ConfigError(_none_found(bench, plan, closest, states))
    return plan


def _none_found(bench: "EpisodeBenchmark", plan: RevisitPlan, closest: tuple[float, str, int, int, float] | None,
                states: dict[int, np.ndarray]) -> str:
    s = plan.settings
    which = f"elements {list(s.state_dims)}" if s.state_dims is not None else f"all {plan.width} element(s)"
    head = (f"task=memory: no revisit in the {plan.candidates} sample(s) of {bench.root}: no frame's state "
            f"({plan.key!r}, {which}) comes back within tolerance {s.tolerance:g} of an earlier frame's after "
            f"leaving it, within one sample ({bench.horizon + 1} frames: benchmark.horizon={bench.horizon}).")
    if closest is None:
        tail = " Within a sample the state never comes back towards an earlier frame's (it stays or moves away)."

    else:
        distance, sample, i, j, farthest = closest
        tail = (f" The closest return found: {distance:.6g} ({sample}, frames {i} → {j} of the sample, after going "
                f"{farthest:.6g} away); set task.data.memory.tolerance={_tolerance_for(distance, farthest)} to count "
                "it, or compare fewer elements (task.data.memory.state_dims).")
    whole = None
    for index, array in states.items():
        if len(array) > HINT_FRAMES:
            continue
        part = array if s.state_dims is None else array[:, list(s.state_dims)]
        if not np.isfinite(part).all():
            continue
        found = return_pairs(part, s.tolerance)
        if found.pairs:
            gap = min(j - i for i, j in found.pairs)
            if whole is None or gap < whole[0]:
                whole = (gap, bench.episodes[index].name)
    if whole is not None:
        gap, name = whole
        fix = "benchmark.stride=1 (a sample starting at every frame)" if gap <= bench.horizon else \
            f"benchmark.horizon={gap} (or more) with benchmark.stride=1"
        tail += (f" Over whole episodes the state does return within the tolerance ({name}: after {gap} frames, "
                 f"across samples): {fix} would hold it in a sample.")
    elif closest is None:
        tail += " Longer samples (benchmark.horizon) may hold returns."
    return head + tail


def _tolerance_for(distance: float, farthest: float) -> str:
    """A tolerance that counts a return of ``distance`` after going ``farthest`` away: ``distance``
    rounded up to two significant digits when that stays below ``farthest``, else ``distance`` itself."""
    if distance > 0:
        exponent = int(np.floor(np.log10(distance))) - 1
        rounded = float(np.ceil(distance / 10.0 ** exponent - 1e-9) * 10.0 ** exponent)
        if rounded < farthest:
            return f"{rounded:.{max(-exponent, 0)}f}"
    return repr(float(distance))


def memory_metadata(plan: RevisitPlan, sample_id: str) -> dict[str, Any]:
    """``metadata["memory"]`` of one sample: its revisits (also its loops), measured against the truth on
    the blocks where the dataset's frames agree."""
    found = plan.samples.get(sample_id, Returns())
    pairs = [list(p) for p in found.pairs]
    s = plan.settings
    return {"source": SOURCE, "state_key": plan.key, "tolerance": s.tolerance,
            "state_dims": list(s.state_dims) if s.state_dims is not None else None,
            "revisits": pairs, "loops": pairs, "state_distances": list(found.distances),
            "measure": MEASURE, "agree": s.frame_tolerance}
