"""What an inverse-dynamics model learns from: clips of frames with the action of every transition.

- :func:`from_simulator` records episodes from the benchmark's own simulator with
  :func:`wfeval.recipes.data.record` (the learned world model's recorder): episode seeds from the
  recipe's namespace, every evaluation seed of the benchmark excluded, actions from its behaviour
  policy; the seeds are kept (a scored sample is checked against them);
- :func:`from_split` reads the samples of one split of a dataset benchmark (a folder, LeRobot, HDF5,
  video + actions): each sample's reference video and actions; the reference videos' sha256 are
  kept (a scored sample whose reference is among them is refused).

Validation data comes from other seeds (simulator) or a deterministic fifth of the samples
(a split), never from the training clips.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass, field
from typing import Any, Sequence

import numpy as np

from wfeval.recipes.idm.net import KINDS


@dataclass
class Clips:
    videos: list[np.ndarray]  # T_i×H×W×3 uint8
    actions: list[np.ndarray]  # T_i − 1 ids (int64) or (T_i − 1)×D floats
    kind: str  # discrete | continuous
    action_names: tuple[str, ...] = ()  # discrete: one per id
    action_space: dict[str, Any] | None = None  # continuous: the benchmark's ActionSpace.to_dict()
    sources: list[Any] = field(default_factory=list)  # episode seeds, or reference videos' sha256
    info: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.kind not in KINDS:
            raise ValueError(f"clips: kind {self.kind!r} is not one of {KINDS}")
        if len(self.videos) != len(self.actions):
            raise ValueError(f"clips: {len(self.videos)} videos but {len(self.actions)} action lists")
        for i, (video, actions) in enumerate(zip(self.videos, self.actions)):
            if len(video) != len(actions) + 1:
                raise ValueError(f"clip {i}: {len(video)} frames need {len(video) - 1} actions, got {len(actions)}")

    @property
    def transitions(self) -> int:
        return int(sum(len(a) for a in self.actions))

    @property
    def n_out(self) -> int:
        if self.kind == "discrete":
            return len(self.action_names)
        return int(np.prod(np.asarray(self.actions[0]).shape[1:]))

    def data_hash(self) -> str:
        digest = hashlib.sha256()
        for video, actions in zip(self.videos, self.actions):
            for array in (np.ascontiguousarray(video), np.ascontiguousarray(actions)):
                digest.update(json.dumps([list(array.shape), str(array.dtype)]).encode())
                digest.update(array.tobytes())
        digest.update(json.dumps([self.kind, list(self.action_names), self.action_space], sort_keys=True).encode())
        return digest.hexdigest()


def from_simulator(bench: Any, *, episodes: int, steps: int, seed: int) -> Clips:
    """``episodes`` episodes of ``steps`` actions from the simulator behind ``bench`` (gridworld or a
    recorded game family), seeded from the recipe's namespace with ``seed``."""
    from wfeval.recipes.data import record

    rec = record(bench, episodes=episodes, steps=steps, seed=seed, state=False)
    if rec.is_continuous:  # benchmark=pusht: float32 vectors in the benchmark's action space
        return Clips(videos=list(rec.frames), actions=[a.astype(np.float32) for a in rec.actions], kind="continuous",
                     action_space=rec.action_space, sources=[int(s) for s in rec.seeds], info=dict(rec.info))
    return Clips(videos=list(rec.frames), actions=[a.astype(np.int64) for a in rec.actions], kind="discrete",
                 action_names=tuple(rec.action_names), sources=[int(s) for s in rec.seeds], info=dict(rec.info))


def from_requests(requests: Sequence[Any], what: str) -> Clips:
    """Clips of dataset samples (requests with a reference video and actions)."""
    from wfeval.api import action_space_of
    from wfeval.models.base import actions_of
    from wfeval.storage.artifacts import read_array

    videos, actions, sources, ids = [], [], [], []
    kind, names, space = None, (), None
    for request in requests:
        if "video" not in request.references or "actions" not in request.controls:
            continue
        declared = action_space_of(request)
        this = "continuous" if declared is not None and declared.is_continuous else "discrete"
        if kind is None:
            kind, names = this, tuple(request.controls.get("action_names") or ())
            space = declared.to_dict() if this == "continuous" else None
        elif this != kind:
            raise ValueError(f"{what}: sample {request.sample_id!r} has {this} actions, earlier samples {kind} ones")
        video = read_array(request.references["video"])
        acts = np.asarray(actions_of(request), dtype=np.float32 if this == "continuous" else np.int64)
        if this == "continuous":
            acts = acts.reshape(len(acts), -1)
        if len(video) != len(acts) + 1:
            raise ValueError(f"{what}: sample {request.sample_id!r} has {len(video)} reference frames and "
                             f"{len(acts)} actions (an IDM needs one action per transition)")
        videos.append(video)
        actions.append(acts)
        sources.append(request.references["video"].sha256)
        ids.append(request.sample_id)
    if not videos:
        raise ValueError(f"{what}: no sample has both a reference video and actions; an IDM cannot be trained on it")
    if kind == "discrete" and not names:
        names = tuple(str(i) for i in range(int(max(int(a.max()) for a in actions if len(a))) + 1))
    return Clips(videos, actions, kind, names, space, sources, {"samples": len(ids),
                                                               "sample_ids_sha256": _sha(ids)})


def split_validation(clips: Clips, fraction: float = 0.2) -> tuple[Clips, Clips]:
    """A deterministic held-out part of a dataset's clips (by the hash of each clip's source)."""
    if not 0.0 < fraction < 1.0:
        raise ValueError(f"validation fraction must be in (0, 1), got {fraction}")
    held = [int(hashlib.sha256(str(s).encode()).hexdigest()[:8], 16) / 16**8 < fraction for s in clips.sources]
    if all(held) or not any(held):  # too few clips for a fraction: keep the last one apart
        held = [i == len(held) - 1 for i in range(len(held))]
    if len(held) < 2:
        raise ValueError("an IDM needs at least 2 samples (one to train on, one held out)")

    def part(keep: bool) -> Clips:
        pick = [i for i, h in enumerate(held) if h == keep]
        return Clips([clips.videos[i] for i in pick], [clips.actions[i] for i in pick], clips.kind,
                     clips.action_names, clips.action_space, [clips.sources[i] for i in pick], dict(clips.info))
    return part(False), part(True)


def _sha(items: Sequence[Any]) -> str:
    return hashlib.sha256(json.dumps(list(items)).encode()).hexdigest()
