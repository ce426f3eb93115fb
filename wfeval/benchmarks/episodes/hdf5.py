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
from wfeval.config.extras import require


def _is_frames(data: Any) -> bool:
    return data.ndim == 4 and data.shape[-1] == 3


def _natural(name: str) -> list[Any]:
    return [int(part) if part.isdigit() else part for part in re.split(r"(\d+)", name)]


class HDF5Benchmark(EpisodeBenchmark):
    """An HDF5 file of episodes; ``dataset_root`` is the file."""

    family = "hdf5"

    def __init__(self, dataset_root: str, camera: str | None = None, action_key: str = "actions",
                 group: str = "data", obs_group: str = "obs", **options: Any):
        require(f"benchmark={self.family}", "h5py")  # the datasets extra: said before anything is read
        self.camera, self.action_key = camera, str(action_key)
        self.group, self.obs_group = str(group).strip("/"), str(obs_group).strip("/")
        super().__init__(dataset_root, **options)

    @property
    def folder(self) -> Path:
        """The folder the file's external links, raw storage and virtual sources must stay in."""
        return self.root.parent

    def read_episodes(self) -> tuple[list[Episode], ActionSpace | None]:
        import h5py

        if not self.root.is_file():
            raise ConfigError(f"benchmark.dataset_root: {self.root} is not a file (benchmark=hdf5 reads one HDF5 "
                              "file of episodes)")
        try:
            handle = h5py.File(self.root, "r")
        except OSError as exc:
            raise ConfigError(f"benchmark.dataset_root: {self.root} is not a readable HDF5 file ({exc})") from exc
        self._external: dict[str, str] = {}
        with handle:
            group = handle.get(self.group, getlink=True) if self.group else h5py.HardLink()
            if self.group and (group is None or not isinstance(group, h5py.HardLink)
                               or not isinstance(handle[self.group], h5py.Group)):
                raise ConfigError(self._no_group(handle))
            node = handle[self.group] if self.group else handle["/"]
            names = sorted((k for k in node if self._is_episode(node, k)), key=_natural)
            if not names:
                raise ConfigError(f"{self.root}: group {self.group or '/'!r} holds no episode group")
            splits = self._splits(handle)
            self._choose_camera(handle, names[0])
            episodes = [self._episode(handle, name, splits.get(name, "default")) for name in names]
        actions = next((e.actions for e in episodes if e.actions is not None), None)
        space = continuous_space(actions, where=f"{self.root.name}[{self._key('*', self.action_key)}]") \
            if actions is not None else None
        return episodes, space

    def _no_group(self, handle: Any) -> str:
        top = sorted(handle.keys())
        hint = ""
        if top and all(k.startswith("episode_") for k in top):
            hint = " (episodes at the file's root, as Minari writes them: benchmark=minari reads this layout)"
        return (f"benchmark.group: {self.root} has no group {self.group!r}; its top level: "
                f"{', '.join(top[:8]) or '(empty)'}{', ...' if len(top) > 8 else ''}{hint}")

    def _key(self, name: str, *rest: str) -> str:
        return "/".join(p for p in (self.group, name, *rest) if p)

    @staticmethod
    def _is_episode(node: Any, name: str) -> bool:
        import h5py

        link = node.get(name, getlink=True)
        if isinstance(link, h5py.HardLink):
            return node.get(name, getclass=True) is h5py.Group
        return name != "mask"  # a link: followed (and checked) when the episode is read

    def _splits(self, handle: Any) -> dict[str, str]:
        """Episode name -> split, from ``mask/<split>`` (robomimic's filter keys), when there are any."""
        import h5py

        out: dict[str, str] = {}
        if not isinstance(handle.get("mask", getlink=True), h5py.HardLink):  # a link is never followed
            return out
        mask = handle["mask"]
        if not isinstance(mask, h5py.Group):
            return out
        for split in sorted(mask.keys()):
            data = mask[split]
            if not isinstance(data, h5py.Dataset) or data.external or data.is_virtual:
                raise ConfigError(f"{self.root.name}[mask/{split}]: expected an array of episode names in the file")
            self._limited(f"mask/{split}", data)
            for raw in np.asarray(data[()]).reshape(-1).tolist():
                out.setdefault(raw.decode() if isinstance(raw, bytes) else str(raw), split)
        return out

    def _limited(self, key: str, data: Any) -> None:
        from wfeval.benchmarks.episodes.decoder import check_rows
        from wfeval.io import VideoReadError

        try:
            check_rows(self.root, key, tuple(data.shape) or (1,), data.dtype.itemsize, self.limits)
        except VideoReadError as exc:
            raise ConfigError(f"{self.root.name}[{key}]: {exc.reason}") from None

    def _resolve(self, key: str) -> tuple[Any, list[str]]:
        """(resolved location or None, why the key cannot be read)."""
        return self._resolve_in(self.root, key)

    def _resolve_in(self, path: Path, key: str) -> tuple[Any, list[str]]:
        from wfeval.benchmarks.episodes import hdf5_files

        root = None if self.allow_outside_root else self.folder
        try:
            found = hdf5_files.resolve(path, key, root=root)
        except (OSError, ValueError, KeyError) as exc:
            return None, [str(exc) if isinstance(exc, hdf5_files.HDF5LinkError) else f"{self.root.name}[{key}]: {exc}"]
        return found, hdf5_files.problems(found, root)

    def _choose_camera(self, handle: Any, first: str) -> None:
        import h5py

        where = f"{self.root.name}[{self._key(first, self.obs_group)}]"
        found, problems = self._resolve(self._key(first, self.obs_group))
        if problems:
            hard = isinstance(handle.get(self._key(first), getlink=True), h5py.HardLink)
            node = handle[self._key(first)] if hard else None  # a link is not followed by HDF5
            held = sorted(node.keys()) if isinstance(node, h5py.Group) else []
            hint = " (Minari's layout: benchmark=minari reads it)" if "observations" in held else ""
            raise ConfigError(f"benchmark.obs_group: {'; '.join(problems)}; {self._key(first)} holds "
                              f"{', '.join(held[:12]) or 'nothing'}{hint}")
        with h5py.File(found.file, "r") as other:
            obs = other[found.key] if found.key else other["/"]
            if not isinstance(obs, h5py.Group):
                raise ConfigError(f"benchmark.obs_group: {where} is not a group")
            known = list(obs)
            tested = {k: self._test_member(obs, k, found.file, _is_frames) for k in known}
        images = [k for k, (image, _) in tested.items() if image]
        if self.camera is None:
            self._only_image(where, tested, images, f"{len(images)} image datasets ({', '.join(images) or 'none'}; "
                                                    f"it holds {', '.join(known) or 'nothing'})")
        elif self.camera not in known:
            raise ConfigError(f"benchmark.camera: no {self.camera!r} in {where}; its image datasets: "
                              f"{', '.join(images) or 'none'}")

    def _only_image(self, where: str, tested: dict[str, tuple[Any, list[str]]], images: list[str],
                    found: str) -> None:
        """No camera given: the one image member becomes the camera, once no member is a link that leaves
        the folder, dangles or cycles; else a ConfigError saying what ``where`` has (``found``)."""
        self._refuse_links(where, tested)
        if len(images) != 1:
            raise ConfigError(f"benchmark.camera: {where} has {found}; choose one (benchmark.camera=<key>)")
        self.camera = images[0]

    def _test_member(self, group: Any, name: str, file: Path, test: Any) -> tuple[Any, list[str]]:
        """(``test`` of the dataset ``group[name]``, None if not a dataset; why it cannot be looked at). A link
        is followed only as :mod:`.hdf5_files` follows it, never by HDF5: one that leaves the dataset's
        folder, dangles or cycles is not opened, and its problems say where it points."""
        import h5py

        key = f"{group.name}/{name}".lstrip("/")
        try:
            if isinstance(group.get(name, getlink=True), h5py.HardLink):
                data = group[name]
                return (test(data) if isinstance(data, h5py.Dataset) else None), []
            found, problems = self._resolve_in(file, key)
            if problems:
                return None, problems
            with h5py.File(found.file, "r") as other:
                data = other[found.key] if found.key else other["/"]
                return (test(data) if isinstance(data, h5py.Dataset) else None), []
        except (OSError, RuntimeError, KeyError, ValueError) as exc:
            return None, [f"{file.name}[{key}]: cannot be read ({exc})"]

    @staticmethod
    def _refuse_links(where: str, tested: dict[str, tuple[Any, list[str]]]) -> None:
        """ConfigError when the camera must be chosen and a member of ``where`` is a link that cannot
        be read: it may be the camera, so the choice cannot be made without it."""
        problems = [p for _, found in tested.values() for p in found]
        if problems:
            raise ConfigError(f"benchmark.camera: {where} cannot be searched for its camera: "
                              f"{'; '.join(dict.fromkeys(problems))} (give benchmark.camera=<key> to read "
                              "another of its datasets)")

    def _episode(self, handle: Any, name: str, split: str) -> Episode:
        import h5py

        from wfeval.benchmarks.episodes import hdf5_files
        from wfeval.benchmarks.episodes.decoder import check_rows, digest
        from wfeval.io import VideoReadError

        frames_key = self._key(name, self.obs_group, self.camera)
        actions_key = self._key(name, self.action_key)
        episode = Episode(name=name, split=split, length=0, frames=None, actions=None,
                          actions_where=f"{self.root.name}[{actions_key}]",
                          files={"file": self.root.name, "frames": frames_key, "actions": actions_key},
                          metadata={"hdf5_group": self._key(name), "camera": self.camera})
        frames_at, problems = self._resolve(frames_key)
        episode.errors += problems
        if frames_at is not None and not problems:
            with h5py.File(frames_at.file, "r") as other:
                frames = other[frames_at.key]
                if not isinstance(frames, h5py.Dataset):
                    episode.errors.append(f"{self.root.name}[{frames_key}]: not a dataset")
                else:
                    episode.length = int(frames.shape[0]) if frames.ndim else 0
                    try:
                        self._check_frames(frames, frames_key)
                    except VideoReadError as exc:
                        episode.errors.append(f"{self.root.name}[{frames_key}]: "
                                              f"{exc.reason.removeprefix(repr(frames_key) + ': ')}")
        actions_at, problems = self._resolve(actions_key)
        episode.errors += problems
        array = None
        if actions_at is not None and not problems:
            try:
                with h5py.File(actions_at.file, "r") as other:
                    if not isinstance(other[actions_at.key], h5py.Dataset):
                        raise ValueError("not a dataset")
                    data = hdf5_files.open_dataset(other, actions_at.key)
                    check_rows(self.root, actions_key, tuple(data.shape) or (1,), data.dtype.itemsize, self.limits)
                    if data.ndim and data.shape[0] > self.limits.max_frames:
                        raise ValueError(f"{data.shape[0]:,} actions exceed the limit of {self.limits.max_frames:,} "
                                         f"(raise it with benchmark.limits.max_frames={data.shape[0]} if it is right)")
                    array = np.asarray(data[()])
            except VideoReadError as exc:
                episode.errors.append(f"{self.root.name}[{actions_key}]: "
                                      f"{exc.reason.removeprefix(repr(actions_key) + ': ')}")
            except (OSError, ValueError, TypeError, KeyError) as exc:
                episode.errors.append(f"{self.root.name}[{actions_key}]: cannot be read ({exc})")
        if array is not None and (array.ndim < 1 or len(array) < episode.length - 1):
            episode.errors.append(f"{self.root.name}[{actions_key}]: shape {tuple(array.shape)}; the episode "
                                  f"has {episode.length} frames, so it needs at least {episode.length - 1} "
                                  "actions (one per step)")
        elif array is not None:
            episode.actions = array[:, None] if array.ndim == 1 and np.issubdtype(array.dtype, np.floating) \
                else array
            if not episode.length and episode.errors:
                episode.length = len(array) + 1  # the frames are unreadable: the actions say how long it is
        if not episode.errors:
            path, limits = self.root, self.limits
            files = hdf5_files.digests(frames_at, digest)
            for kind, dep, sha in files:
                self._external[dep] = sha
            where: dict[str, Any] = {"files": files} if files else {}
            if self.encoded:
                where["encoded"] = True

            def located(first: int, stop: int, image: bool) -> tuple[Path, dict[str, Any]]:
                return path, options_for("hdf5", limits=limits, image=image, key=frames_key, start=first, stop=stop,
                                         **where)

            episode.frames = located
        return episode

    encoded = False  # whether each row of the frames dataset is one encoded image (Minari)

    # -- task=memory: a state under the observations (wfeval.benchmarks.episodes.revisits) --------------

    def state_column(self, key: str | None) -> str:
        """``key`` under the first episode's observations, default the only numeric T or T×D dataset
        beside the camera (ConfigError naming what the observations hold)."""
        import h5py

        group_key = self._key(self.episodes[0].name, self.obs_group)
        where = f"{self.root.name}[{group_key}]"
        found, problems = self._resolve(group_key)
        if problems:
            raise ConfigError(f"task=memory: {'; '.join(problems)}")
        with h5py.File(found.file, "r") as other:
            node = other[found.key] if found.key else other["/"]
            if not isinstance(node, h5py.Group):
                raise ConfigError(f"task=memory: {where} holds the frames alone (no group of observations), so "
                                  f"benchmark={self.family} records no state beside them and the revisits cannot be "
                                  "found; use task=memory on a dataset that records a pose or state")
            held = [k for k in node if k != self.camera]
            states = [k for k in held if isinstance(node.get(k, getlink=True), h5py.HardLink)
                      and node.get(k, getclass=True) is h5py.Dataset and node[k].ndim in (1, 2)
                      and np.issubdtype(node[k].dtype, np.number)]
        if key is None and len(states) == 1:
            return states[0]
        if not held:
            raise ConfigError(f"task=memory: {where} holds the camera {self.camera!r} alone: the dataset records no "
                              "pose or state beside its frames, so its revisits cannot be found; use task=memory on a "
                              "dataset that records one (an obs/<key> of T or T×D numbers)")
        if key is not None and key in held:
            return key
        shown = (f"its numeric T or T×D datasets: {', '.join(states) or 'none'}; it holds "
                 f"{', '.join(held) or 'nothing'} beside the camera {self.camera!r}")
        if key is None:
            raise ConfigError(f"task.data.memory.state_key: choose the state the revisits are found in, under {where}: "
                              f"{shown} (task.data.memory.state_key=<key>)")
        raise ConfigError(f"task.data.memory.state_key: no {key!r} in {where}; {shown}")

    def read_states(self, episode: Episode, key: str) -> np.ndarray:
        import h5py

        from wfeval.benchmarks.episodes import hdf5_files
        from wfeval.benchmarks.episodes.decoder import check_rows
        from wfeval.io import VideoReadError

        state_key = self._key(episode.name, self.obs_group, key)
        found, problems = self._resolve(state_key)
        if problems:
            raise ValueError("; ".join(problems))
        try:
            with h5py.File(found.file, "r") as other:
                if not isinstance(other[found.key], h5py.Dataset):
                    raise ValueError(f"{self.root.name}[{state_key}] is not a dataset")
                data = hdf5_files.open_dataset(other, found.key)
                check_rows(self.root, state_key, tuple(data.shape) or (1,), data.dtype.itemsize, self.limits)
                return np.asarray(data[()])
        except VideoReadError as exc:
            raise ValueError(f"{self.root.name}[{state_key}]: {exc.reason}") from None
        except (OSError, TypeError, KeyError) as exc:
            raise ValueError(f"{self.root.name}[{state_key}]: cannot be read ({exc})") from None

    def _check_frames(self, frames: Any, key: str) -> None:
        """VideoReadError when the frames dataset cannot give frames within the limits (nothing read)."""
        from wfeval.benchmarks.episodes.decoder import check_rows
        from wfeval.io import VideoReadError

        if frames.ndim != 4 or frames.shape[-1] != 3 or frames.dtype != np.uint8:
            raise VideoReadError(self.root, f"frames must be uint8 T×H×W×3 RGB, found {frames.dtype} "
                                            f"{tuple(frames.shape)}")
        check_rows(self.root, key, tuple(frames.shape), 1, self.limits)

    def fingerprint(self) -> dict[str, Any]:
        from wfeval.benchmarks.episodes.decoder import digest

        return {**super().fingerprint(), "format": "hdf5/robomimic", "camera": self.camera,
                "action_key": self.action_key, "group": self.group, "obs_group": self.obs_group,
                "file_sha256": digest(self.root), "external_files_sha256": dict(sorted(self._external.items()))}
