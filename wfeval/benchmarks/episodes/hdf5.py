"""``benchmark=hdf5``: episodes in one HDF5 file, robomimic style, read in place with h5py.

::

    data/                       group (``group``)
      demo_0/                   one group per episode (natural order: demo_2 before demo_10)
        obs/agentview_image     T×H×W×3 uint8 frames (``obs_group`` / ``camera``)
        actions                 T×D float actions (``action_key``); action t leads from frame t to t+1
      demo_1/ ...
    mask/train, mask/valid      optional: arrays of episode names per split (``benchmark.split=valid``)

Frames must be ``uint8`` RGB (``T×H×W×3``); the actions ``T×…`` floats (integer ids ``T`` are read as
discrete ids). HDF5 records no frame rate: give ``benchmark.fps``.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import numpy as np

from wfeval.api import ActionSpace
from wfeval.benchmarks.episodes.base import Episode, EpisodeBenchmark, continuous_space
from wfeval.benchmarks.episodes.decoder import options_for
from wfeval.config.errors import ConfigError


def _natural(name: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


class HDF5Benchmark(EpisodeBenchmark):
    """An HDF5 file of episodes; ``dataset_root`` is the file."""

    family = "hdf5"

    def __init__(self, dataset_root: str, camera: str | None = None, action_key: str = "actions",
                 group: str = "data", obs_group: str = "obs", **options: Any):
        self.camera, self.action_key = camera, str(action_key)
        self.group, self.obs_group = str(group).strip("/"), str(obs_group).strip("/")
        super().__init__(dataset_root, **options)

    def read_episodes(self) -> tuple[list[Episode], ActionSpace | None]:
        import h5py

        if not self.root.is_file():
            raise ConfigError(f"benchmark.dataset_root: {self.root} is not a file (benchmark=hdf5 reads one HDF5 "
                              "file of episodes)")
        try:
            handle = h5py.File(self.root, "r")
        except OSError as exc:
            raise ConfigError(f"benchmark.dataset_root: {self.root} is not a readable HDF5 file ({exc})") from exc
        with handle:
            if self.group not in handle or not isinstance(handle[self.group], h5py.Group):
                raise ConfigError(f"benchmark.group: {self.root} has no group {self.group!r}; its top level: "
                                  f"{', '.join(sorted(handle.keys())) or '(empty)'}")
            names = sorted((k for k in handle[self.group] if isinstance(handle[self.group][k], h5py.Group)),
                           key=_natural)
            if not names:
                raise ConfigError(f"{self.root}: group {self.group!r} holds no episode group")
            splits = self._splits(handle)
            self._choose_camera(handle, names[0])
            episodes = [self._episode(handle, name, splits.get(name, "default")) for name in names]
        actions = next((e.actions for e in episodes if e.actions is not None), None)
        space = continuous_space(actions, where=f"{self.root.name}[{self.group}/*/{self.action_key}]") \
            if actions is not None else None
        return episodes, space

    def _splits(self, handle: Any) -> dict[str, str]:
        """Episode name -> split, from ``mask/<split>`` (robomimic's filter keys), when there are any."""
        out: dict[str, str] = {}
        mask = handle.get("mask")
        if mask is None:
            return out
        for split in sorted(mask.keys()):
            for raw in np.asarray(mask[split]).tolist():
                out.setdefault(raw.decode() if isinstance(raw, bytes) else str(raw), split)
        return out

    def _choose_camera(self, handle: Any, first: str) -> None:
        import h5py

        obs = handle[self.group][first].get(self.obs_group)
        where = f"{self.root.name}[{self.group}/{first}/{self.obs_group}]"
        if not isinstance(obs, h5py.Group):
            raise ConfigError(f"benchmark.obs_group: {where} is not a group")
        images = [k for k, v in obs.items() if isinstance(v, h5py.Dataset) and v.ndim == 4 and v.shape[-1] == 3]
        if self.camera is None:
            if len(images) != 1:
                raise ConfigError(f"benchmark.camera: {where} has {len(images)} image datasets "
                                  f"({', '.join(images) or 'none'}); choose one (benchmark.camera=<key>)")
            self.camera = images[0]
        elif self.camera not in obs:
            raise ConfigError(f"benchmark.camera: no {self.camera!r} in {where}; its image datasets: "
                              f"{', '.join(images) or 'none'}")

    def _episode(self, handle: Any, name: str, split: str) -> Episode:
        frames_key = f"{self.group}/{name}/{self.obs_group}/{self.camera}"
        actions_key = f"{self.group}/{name}/{self.action_key}"
        episode = Episode(name=name, split=split, length=0, frames=None, actions=None,
                          actions_where=f"{self.root.name}[{actions_key}]",
                          files={"file": self.root.name, "frames": frames_key, "actions": actions_key},
                          metadata={"hdf5_group": f"{self.group}/{name}", "camera": self.camera})
        frames = handle.get(frames_key)
        if frames is None:
            episode.errors.append(f"{self.root.name}[{frames_key}]: no such dataset")
        elif frames.ndim != 4 or frames.shape[-1] != 3 or frames.dtype != np.uint8:
            episode.errors.append(f"{self.root.name}[{frames_key}]: frames must be uint8 T×H×W×3 RGB, found "
                                  f"{frames.dtype} {tuple(frames.shape)}")
        else:
            episode.length = int(frames.shape[0])
        actions = handle.get(actions_key)
        if actions is None:
            episode.errors.append(f"{self.root.name}[{actions_key}]: no such dataset")
        else:
            try:
                array = np.asarray(actions[()])
            except (OSError, ValueError, TypeError) as exc:
                episode.errors.append(f"{self.root.name}[{actions_key}]: cannot be read ({exc})")
                array = None
            if array is not None and (array.ndim < 1 or len(array) < episode.length - 1):
                episode.errors.append(f"{self.root.name}[{actions_key}]: shape {tuple(array.shape)}; the episode "
                                      f"has {episode.length} frames, so it needs at least {episode.length - 1} "
                                      "actions (one per step)")
            elif array is not None:
                episode.actions = array[:, None] if array.ndim == 1 and np.issubdtype(array.dtype, np.floating) \
                    else array
        if not episode.errors:
            path, limits = self.root, self.limits

            def located(first: int, stop: int, image: bool) -> tuple[Path, dict[str, Any]]:
                return path, options_for("hdf5", limits=limits, image=image, key=frames_key, start=first, stop=stop)

            episode.frames = located
        return episode

    def fingerprint(self) -> dict[str, Any]:
        from wfeval.benchmarks.episodes.decoder import digest

        return {**super().fingerprint(), "format": "hdf5/robomimic", "camera": self.camera,
                "action_key": self.action_key, "group": self.group, "obs_group": self.obs_group,
                "file_sha256": digest(self.root)}
