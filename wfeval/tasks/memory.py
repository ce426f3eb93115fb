"""``task=memory``: trajectories that leave places and come back (``protocol=memory``).

A family serves it in one of two ways, in its own package:

- it **plans** revisits from its exact state (:class:`RevisitPlanner`: gridworld, the maze family) and
  builds each memory sample with :func:`memory_request` when ``task.data.memory`` is set;
- or, a dataset reader, it **finds** them where its recorded state returns (:class:`RevisitFinder`:
  :mod:`wfeval.benchmarks.episodes.revisits`).

A benchmark that does neither is refused before any generation (:data:`NEED`).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any, Mapping, Protocol, Sequence, runtime_checkable

from wfeval.api import GenerationRequest
from wfeval.storage.artifacts import ArtifactStore
from wfeval.tasks.family import FamilyNeed


@dataclass(frozen=True)
class RevisitPlan:
    """A trajectory that leaves places and comes back (``task=memory``), planned from the exact state.

    ``places``: per frame (``len(actions) + 1`` of them) the true place the frame shows — any
    JSON-able value (gridworld: the agent's cell; a 3-D maze: the agent's cell and heading) — or
    None where the frame shows no place of interest; ``loops``: ``(start, end)`` frame indices of
    each action sequence followed by its inverse (the world must be back where it was: the family
    declares its inverse actions), empty where the family has none."""

    actions: tuple[Any, ...]
    places: tuple[Any, ...]
    loops: tuple[tuple[int, int], ...] = ()


@runtime_checkable
class RevisitPlanner(Protocol):
    """What a family offers for ``task=memory`` (``protocol=memory`` refuses a benchmark without it).

    - ``revisit_plan(request, gaps)``: from the sample's exact start state, a trajectory that leaves
      and comes back after gaps of the given lengths (:class:`RevisitPlan`);
    - ``simulate(request, actions)``: the true video (initial frame first) and metadata updates;
    - ``static_masks(request, actions)``: per frame of that video an H×W boolean mask of the pixels
      that show only static content (walls, background): never a moving object, never the agent;
    - optionally ``memory_gaps``: the gaps its plans suit (``benchmark.memory_gaps``), used when
      ``task.data.memory.gaps`` is null (the task's default).

    The family's adapter builds each memory sample with :func:`memory_request` when
    ``task.data.memory`` is set (gridworld: ``GridworldBenchmark.materialize``)."""

    def revisit_plan(self, request: GenerationRequest, gaps: Sequence[int]) -> RevisitPlan: ...

    def simulate(self, request: GenerationRequest, actions: Sequence[Any]) -> tuple[Any, Mapping[str, Any]]: ...

    def static_masks(self, request: GenerationRequest, actions: Sequence[Any]) -> Any: ...


@runtime_checkable
class RevisitFinder(Protocol):
    """A dataset family that finds its revisits where the recorded state returns (``task=memory`` on a
    dataset, :mod:`wfeval.benchmarks.episodes.revisits`): ``state_column(key)`` names the state read (or
    refuses), ``task_records(task)`` gives the samples that hold a revisit (or refuses, saying why)."""

    def state_column(self, key: str | None) -> str: ...

    def task_records(self, task: Any) -> Sequence[Any]: ...


def revisit_pairs(places: Sequence[Any]) -> list[tuple[int, int]]:
    """``(first visit, revisit)`` frame pairs: for every frame whose place was first shown at an earlier
    frame and left in between (a place seen again after the agent stayed put is not a revisit)."""
    first: dict[str, int] = {}
    pairs = []
    previous = None
    left: set[str] = set()
    for j, place in enumerate(places):
        key = None if place is None else canonical_place(place)
        if previous is not None and previous != key:
            left.add(previous)
        if key is not None:
            if key not in first:
                first[key] = j
            elif key in left:
                pairs.append((first[key], j))
        previous = key
    return pairs


def canonical_place(place: Any) -> str:
    import json

    return json.dumps(place, sort_keys=True, separators=(",", ":"), default=str)


#: ``task.data.memory``'s keys for a benchmark that plans revisits (``gaps``) and for a dataset that finds
#: them where its recorded state returns (:mod:`wfeval.benchmarks.episodes.revisits`)
PLANNED_KEYS = ("gaps",)
DATASET_KEYS = ("state_key", "tolerance", "state_dims", "frame_tolerance")


def memory_settings(memory: Any, default: Sequence[int] | None = None,
                    where: str = "benchmark.memory_gaps") -> tuple[int, ...]:
    """``task.data.memory`` checked for a family that plans revisits: its ``gaps``, a non-empty list of
    positive integers; ``gaps: null`` (the task's default) takes the benchmark's own ``default``
    (``benchmark.memory_gaps``: each benchmark declares the gaps its plans suit); a dataset's key given a
    value is refused, naming what it is for (ConfigError naming the key)."""
    from wfeval.config.errors import ConfigError

    memory = dict(memory or {})
    unknown = sorted(set(memory) - {*PLANNED_KEYS, *DATASET_KEYS})
    if unknown:
        known = ", ".join(PLANNED_KEYS + DATASET_KEYS)
        raise ConfigError(f"task.data.memory: unknown key(s) {unknown}; known: {known}")
    given = [k for k in DATASET_KEYS if memory.get(k) is not None]
    if given:
        raise ConfigError(f"task.data.memory.{given[0]}: applies to a dataset with a state column (benchmark=lerobot, "
                          "hdf5, minari: revisits found where the recorded state returns); this benchmark plans its "
                          "revisits from its exact state (task.data.memory.gaps)")
    gaps, key = memory.get("gaps"), "task.data.memory.gaps"
    if gaps is None:
        if default is None:
            raise ConfigError("task.data.memory.gaps is not set and the benchmark declares no default gaps "
                              f"({where}): pass task.data.memory.gaps=[...]")
        gaps, key = default, where
    return check_gaps(gaps, key)


def check_gaps(gaps: Any, key: str) -> tuple[int, ...]:
    """``gaps`` as a tuple of positive integers, or a ConfigError naming ``key``."""
    from wfeval.config.errors import ConfigError

    if isinstance(gaps, (str, bytes)) or not isinstance(gaps, Sequence) or not gaps or not all(
            isinstance(g, int) and not isinstance(g, bool) and g >= 1 for g in gaps):
        raise ConfigError(f"{key} must be a non-empty list of positive integers, got {gaps!r}")
    return tuple(int(g) for g in gaps)


def memory_request(adapter: RevisitPlanner, request: GenerationRequest, *, store: ArtifactStore,
                   memory: Mapping[str, Any], cache_root: str | Path | None = None) -> GenerationRequest:
    """The memory sample of an ordinary sample: the family's revisit plan from its start, the true video
    as the reference, the static masks (``references["static_mask"]``, T×H×W uint8, 1 = static) and
    ``metadata["memory"]``: the gaps asked for, the places, the ``revisits`` (pairs of frames showing
    the same place, :func:`revisit_pairs`) and the ``loops`` (action sequences followed by their inverses).

    ``cache_root``: where a family whose plans cost real simulation (``memory_cache_key(request, gaps)``:
    a content key of everything the plan and its video depend on, or None) keeps each planned sample,
    one sealed JSON index per key (:class:`~wfeval.storage.recordings.RecordingCache`) beside the frames
    in ``store``: a later run, or another model's, builds the same request without simulating. An
    index edited or damaged in the store is refused (its content hash) and the sample planned again."""
    import numpy as np

    gaps = memory_settings(memory, getattr(adapter, "memory_gaps", None))
    key = adapter.memory_cache_key(request, gaps) if cache_root is not None and hasattr(adapter, "memory_cache_key") \
        else None
    cache = None
    if key is not None:
        from wfeval.storage.recordings import RecordingCache

        cache = RecordingCache(cache_root, fmt=MEMORY_SAMPLE_FORMAT, what="memory sample", store=store)
        kept = cache.load(key, read=lambda sample: _kept_memory_sample(sample, request, store))
        if kept is not None:
            return kept
        if key in cache.refused:  # an edited or damaged entry is never trusted: planned again
            import logging

            logging.getLogger(__name__).warning("memory sample refused, planning it again: %s", cache.refused[key])
    plan = adapter.revisit_plan(request, gaps)
    actions = list(plan.actions)
    if len(plan.places) != len(actions) + 1:
        raise ValueError(f"revisit plan of {request.sample_id!r}: {len(plan.places)} places for "
                         f"{len(actions) + 1} frames")
    video, meta = adapter.simulate(request, actions)
    masks = np.asarray(adapter.static_masks(request, actions), dtype=bool)
    if masks.shape != np.asarray(video).shape[:3]:
        raise ValueError(f"static masks of {request.sample_id!r} are {masks.shape}, the video "
                         f"{np.asarray(video).shape[:3]}")
    from wfeval.storage.recordings import artifact_entry

    video_ref = store.put_array(np.asarray(video), kind="video")
    mask_ref = store.put_array(masks.astype(np.uint8), kind="array")
    sample = {"actions": actions, "gaps": list(gaps), "places": list(plan.places),
              "loops": [list(loop) for loop in plan.loops], "meta": dict(meta),
              "video": artifact_entry(video_ref), "static_mask": artifact_entry(mask_ref)}
    if cache is not None:
        import json

        sample = json.loads(json.dumps(sample))  # as the cache gives it back: a later run builds the same request
        cache.save(key, {"format": MEMORY_SAMPLE_FORMAT, "key": key, **sample})
    return _memory_sample(request, store, sample)


#: the format of a cached memory sample (:func:`memory_request` with ``cache_root``)
MEMORY_SAMPLE_FORMAT = "wfeval.memory_sample/1"


def _kept_memory_sample(sample: Mapping[str, Any], request: GenerationRequest, store: ArtifactStore) -> Any:
    """The request built from a kept sample, or None when its frames were pruned from ``store``."""
    if not all(store.object_path(sample[k]["sha256"]).exists() for k in ("video", "static_mask")):
        return None  # planned again
    return _memory_sample(request, store, sample)


def _memory_sample(request: GenerationRequest, store: ArtifactStore, sample: Mapping[str, Any]) -> GenerationRequest:
    """The memory request of ``request`` from a planned sample (fresh or cached: the same request)."""
    import dataclasses

    from wfeval.storage.recordings import artifact_ref

    actions, places = list(sample["actions"]), list(sample["places"])
    memory = {"gaps": list(sample["gaps"]), "places": places,
              "revisits": [list(p) for p in revisit_pairs(places)], "loops": [list(loop) for loop in sample["loops"]]}
    return dataclasses.replace(
        request, controls={**request.controls, "actions": actions},
        references={**request.references, "video": artifact_ref(sample["video"], store),
                    "static_mask": artifact_ref(sample["static_mask"], store)},
        generation={**request.generation, "num_frames": len(actions) + 1},
        metadata={**request.metadata, **dict(sample["meta"]), "memory": memory})



#: what ``protocol=memory`` needs of a benchmark: either interface
NEED = FamilyNeed(
    task="memory", interfaces=(RevisitPlanner, RevisitFinder),
    refusal="protocol=memory: benchmark {name!r} can neither plan revisits from its exact state "
            "(revisit_plan / simulate / static_masks: wfeval.tasks.memory.RevisitPlanner) nor "
            "find them in a recorded state (wfeval.tasks.memory.RevisitFinder); use "
            "benchmark=gridworld or memory_maze, a dataset with a pose or state column "
            "(benchmark=lerobot, hdf5, minari: docs/dataset-readers.md#memory), or a family that "
            "declares them")
