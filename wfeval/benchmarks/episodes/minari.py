"""``benchmark=minari``: a Minari dataset (Farama's offline-RL format, HDF5 storage) read in place with h5py.

The layout Minari 0.5's ``DataCollector`` writes (``minari/dataset/_storages/hdf5_storage.py``)::

    <dataset>/data/main_data.hdf5
      episode_0/                    episodes at the file's root (natural order)
        observations                T+1 observations: the frames (no obs group), or a group of keys
                                    (Dict spaces: benchmark.camera chooses one)
        actions                     T actions; action t leads from frame t to t+1
        rewards, terminations, truncations, infos/
    <dataset>/data/metadata.json    dataset_id, env_spec (JSON), observation_space, action_space, jpeg_encoding

Image observations (a ``uint8`` Box of at least 32×32 in ``[0, 255]``) are stored JPEG-encoded by
default: one encoded frame per step, variable-length ``uint8`` (or fixed-length rows when every
frame encoded to the same size); they are decoded with Pillow, as Minari decodes them, and checked
like every frame read in place. ``jpeg_encoding=False`` datasets hold ``T+1×H×W×3`` frames.
``dataset_root`` is the dataset folder, its ``data`` folder or ``main_data.hdf5``. The frame rate is
``benchmark.fps``, else a ``render_fps`` recorded in the metadata or the env spec; the action bounds
are the action space's (a Box in ``metadata.json``) unless ``benchmark.action_low/high`` are given.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np

from wfeval.api import ActionSpace
from wfeval.benchmarks.episodes.base import Episode, json_object
from wfeval.benchmarks.episodes.hdf5 import HDF5Benchmark
from wfeval.config.errors import ConfigError
from wfeval.config.extras import require

MAIN = "main_data.hdf5"
METADATA = "metadata.json"
OBSERVATIONS = "observations"


def locate(path: Path) -> Path:
    """The ``main_data.hdf5`` of a dataset folder, its ``data`` folder or the file itself."""
    for candidate in (path, path / MAIN, path / "data" / MAIN):
        if candidate.is_file():
            return candidate
    raise ConfigError(f"benchmark.dataset_root: no {MAIN} at {path} or {path / 'data' / MAIN} (a Minari dataset "
                      "folder: data/main_data.hdf5 + data/metadata.json)")


def _named(path: Path) -> Path:
    """``path`` absolute, its folders resolved, a file's own name kept (a symlink is not followed)."""
    return path.resolve() if path.is_dir() else path.parent.resolve() / path.name


def _inside_folder(folder: Path, *paths: Path) -> None:
    """ConfigError when one of ``paths`` (files of the dataset) resolves outside ``folder``: a
    symbolic link out of the dataset is never read (benchmark.allow_outside_root opts in)."""
    for path in paths:
        if not path.exists() and not path.is_symlink():
            continue
        target = path.resolve()
        if target != folder and folder not in target.parents:
            raise ConfigError(f"benchmark.dataset_root: {path.relative_to(folder)} of the Minari dataset {folder} is "
                              f"a symbolic link to {target}, outside the dataset's folder; it is not read (set "
                              "benchmark.allow_outside_root=true to read it)")


def _render_fps(metadata: dict[str, Any]) -> float | None:
    spec = metadata.get("env_spec")
    try:
        spec = json.loads(spec) if isinstance(spec, str) else spec
    except json.JSONDecodeError:
        spec = None
    places = [metadata, spec if isinstance(spec, dict) else {}]
    places += [p.get(k) for p in list(places) for k in ("kwargs", "metadata") if isinstance(p.get(k), dict)]
    for place in places:
        value = place.get("render_fps") if isinstance(place, dict) else None
        if isinstance(value, (int, float)) and not isinstance(value, bool) and value > 0:
            return float(value)
    return None


def _is_vlen_uint8(data: Any) -> bool:
    import h5py

    return data.ndim == 1 and h5py.check_vlen_dtype(data.dtype) == np.dtype(np.uint8)


def _looks_encoded(data: Any) -> bool:
    """One encoded image per row: variable-length uint8, or fixed-length uint8 rows starting as a JPEG/PNG."""
    if _is_vlen_uint8(data):
        return True
    if data.ndim == 2 and data.dtype == np.uint8 and data.shape[0] and data.shape[1] >= 8:
        head = bytes(np.asarray(data[0, :8]))
        return head.startswith(b"\xff\xd8") or head.startswith(b"\x89PNG")
    return False


def _kind(data: Any) -> str | None:
    """``"encoded"`` (one JPEG/PNG per row), ``"raw"`` (uint8 frames) or None (not image observations)."""
    if _looks_encoded(data):
        return "encoded"
    return "raw" if data.ndim == 4 and data.shape[-1] == 3 and data.dtype == np.uint8 else None


class MinariBenchmark(HDF5Benchmark):
    """A Minari dataset (HDF5 storage); ``camera`` chooses a key of Dict observations."""

    family = "minari"
    internal_parameters = ("group", "obs_group")  # fixed by the layout: episodes at the root, obs in "observations"

    def __init__(self, dataset_root: str, camera: str | None = None, action_key: str = "actions",
                 **options: Any):
        require(f"benchmark={self.family}", "h5py")  # the datasets extra: said before anything is read
        main = locate(_named(Path(dataset_root).expanduser()))
        self.named_file = main  # its place in the dataset folder (a link's target is checked, never named)
        self.dataset_folder = main.parent.parent if main.parent.name == "data" else main.parent
        if not options.get("allow_outside_root"):
            _inside_folder(self.dataset_folder, main, main.parent / METADATA)
        self.metadata = self._read_metadata(main.parent / METADATA)
        if options.get("action_low") is None and options.get("action_high") is None:
            options.update(self._bounds())
        if options.get("fps") is None:
            options["fps"] = _render_fps(self.metadata)
        super().__init__(str(main), camera=camera, action_key=action_key, group="", obs_group="", **options)

    @staticmethod
    def _read_metadata(path: Path) -> dict[str, Any]:
        if not path.is_file():
            return {}
        if path.stat().st_size > 64 << 20:
            raise ConfigError(f"{path}: {path.stat().st_size:,} bytes; a Minari metadata.json is far smaller")
        return json_object(path)

    def _bounds(self) -> dict[str, Any]:
        """The action space's Box bounds from metadata.json, when finite."""
        space = self.metadata.get("action_space")
        try:
            space = json.loads(space) if isinstance(space, str) else space
        except json.JSONDecodeError:
            return {}
        if not isinstance(space, dict) or space.get("type") != "Box":
            return {}
        try:
            low = np.asarray(space["low"], dtype=np.float64).reshape(-1)
            high = np.asarray(space["high"], dtype=np.float64).reshape(-1)
        except (KeyError, TypeError, ValueError):
            return {}
        if not (np.all(np.isfinite(low)) and np.all(np.isfinite(high))) or low.shape != high.shape:
            return {}
        return {"action_low": low.tolist(), "action_high": high.tolist()}

    @property
    def folder(self) -> Path:
        """The dataset's folder (``dataset_root`` resolved; its files never lead the reader out of it)."""
        return self.dataset_folder

    def default_name(self) -> str:
        """Minari's dataset id (the dataset's folder ``<name>-v<k>``, never the folder a linked
        ``main_data.hdf5`` leads to): canonical by Minari's own convention."""
        return self.folder.name if self.named_file.parent.name == "data" else self.named_file.stem

    def _no_group(self, handle: Any) -> str:  # pragma: no cover - group is the root
        return f"{self.root}: not a Minari file"

    def _env(self) -> str:
        spec = self.metadata.get("env_spec")
        try:
            spec = json.loads(spec) if isinstance(spec, str) else spec
        except json.JSONDecodeError:
            spec = None
        return str(spec.get("id")) if isinstance(spec, dict) and spec.get("id") else "unknown"

    def read_episodes(self) -> tuple[list[Episode], ActionSpace | None]:
        if self.fps is None:
            raise ConfigError(f"benchmark.fps: the Minari dataset {self.root} (env {self._env()}) records no frame "
                              "rate (no render_fps in its metadata or env spec); give the env's render_fps "
                              "(benchmark.fps=<frames per second>)")
        return super().read_episodes()

    def _choose_camera(self, handle: Any, first: str) -> None:
        import h5py

        where = f"{self.root.name}[{first}/{OBSERVATIONS}]"
        found, problems = self._resolve(f"{first}/{OBSERVATIONS}")
        if problems:
            raise ConfigError(f"benchmark=minari: {where} cannot be read: {'; '.join(problems)}")
        with h5py.File(found.file, "r") as other:
            obs = other[found.key]
            if isinstance(obs, h5py.Dataset):
                if self.camera not in (None, "", OBSERVATIONS):
                    raise ConfigError(f"benchmark.camera: {where} is one array of observations (a Box space), not "
                                      f"a group of keys; there is no {self.camera!r} to choose")
                self.camera, self.obs_group = "", OBSERVATIONS
                self.encoded = _looks_encoded(obs)
                if not self.encoded and not (obs.ndim == 4 and obs.shape[-1] == 3 and obs.dtype == np.uint8):
                    raise ConfigError(f"benchmark=minari: {where} holds {obs.dtype} {tuple(obs.shape)}, not image "
                                      "observations (uint8 T+1×H×W×3 or one encoded frame per step)")
                return
            known = list(obs)
            tested = {k: self._test_member(obs, k, found.file, _kind) for k in known}
        kinds = {k: kind for k, (kind, _) in tested.items() if kind}
        images = list(kinds)
        if self.camera is None:
            found = f"{', '.join(images) or 'none'}; its keys: {', '.join(known) or 'none'}"
            self._only_image(where, tested, images, f"{len(images)} image observation(s) ({found})")
        elif self.camera not in images:
            problems = tested.get(self.camera, (None, []))[1]
            raise ConfigError(f"benchmark.camera: {self.camera!r} is not an image observation of {where}"
                              + (f" ({'; '.join(problems)})" if problems else "")
                              + f"; its image observations: {', '.join(images) or 'none'}")
        self.obs_group, self.encoded = OBSERVATIONS, kinds[self.camera] == "encoded"

    def _check_frames(self, frames: Any, key: str) -> None:
        from wfeval.benchmarks.episodes.decoder import check_rows
        from wfeval.io import VideoReadError

        if not self.encoded:
            return super()._check_frames(frames, key)
        if not (_is_vlen_uint8(frames) or (frames.ndim == 2 and frames.dtype == np.uint8)):
            raise VideoReadError(self.root, f"expected one encoded frame per step (uint8), found {frames.dtype} "
                                            f"{tuple(frames.shape)}")
        check_rows(self.root, key, (int(frames.shape[0]), 1, 1, 3), 1, self.limits)  # the frame count

    def fingerprint(self) -> dict[str, Any]:
        return {**super().fingerprint(), "format": "minari/hdf5", "dataset_id": self.metadata.get("dataset_id"),
                "env": self._env(), "encoded": self.encoded}
